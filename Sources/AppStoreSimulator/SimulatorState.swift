import Crypto
import Foundation
import Synchronization

/// The simulator's mutable state: current faults, request counters and the arrival times of
/// Server API requests. Shared by every request handler, so it lives behind a lock.
public final class SimulatorState: Sendable {
    private struct Inner {
        var faults: SimulatorFaults
        var stats = SimulatorStats()
        var inFlight = 0
        var lastTransactionID: Int64
        var serverAPIArrivals: [ContinuousClock.Instant] = []
        var receiptRequests = ReceiptRequestCounts()
    }

    private let inner: Mutex<Inner>

    /// Creates the state with the faults given at start.
    public init(faults: SimulatorFaults = .none) {
        // Apple's transaction ids are 15–16 digit numbers; starting from the clock keeps ids from
        // two simulator runs on one database apart.
        let seed = Int64(Date().timeIntervalSince1970 * 1000) * 100 % 900_000_000_000_000 + 100_000_000_000_000
        inner = Mutex(Inner(faults: faults, lastTransactionID: seed))
    }

    /// The faults in force.
    public var faults: SimulatorFaults {
        get { inner.withLock { $0.faults } }
        set { inner.withLock { $0.faults = newValue } }
    }

    /// A snapshot of the counters.
    public var stats: SimulatorStats { inner.withLock { $0.stats } }

    /// Sets every counter back to zero.
    public func resetStats() {
        inner.withLock {
            $0.stats = SimulatorStats()
            $0.serverAPIArrivals = []
            $0.receiptRequests = ReceiptRequestCounts()
        }
    }

    /// verifyReceipt requests per receipt, so that a test can prove each upload was sent once.
    public var receiptRequests: ReceiptRequestCounts { inner.withLock { $0.receiptRequests } }

    /// When each Server API request arrived (the latest 10,000), for tests of client pacing.
    public var serverAPIArrivals: [ContinuousClock.Instant] { inner.withLock { $0.serverAPIArrivals } }

    /// A fresh transaction id.
    func nextTransactionID() -> String {
        inner.withLock { state in
            state.lastTransactionID += 1
            return String(state.lastTransactionID)
        }
    }

    /// Counts a receipt issued.
    func countReceiptCreated() { inner.withLock { $0.stats.receiptsCreated += 1 } }

    /// Counts a verifyReceipt request arriving and draws its fault (using up one of a limited
    /// number of faulty requests).
    func beginVerifyRequest(endpoint: String) -> (latency: Duration, action: SimulatorFaults.Action) {
        inner.withLock { state in
            state.stats.verifyReceiptRequests += 1
            state.stats.requestsByEndpoint[endpoint, default: 0] += 1
            state.inFlight += 1
            state.stats.maxInFlight = max(state.stats.maxInFlight, state.inFlight)
            let faults = state.faults
            if let remaining = faults.remainingRequests {
                state.faults.remainingRequests = remaining - 1
                if remaining <= 1 { state.faults = .none }
                if remaining <= 0 { return (.zero, .none) }
            }
            return (.milliseconds(faults.latencyMilliseconds), faults.draw())
        }
    }

    /// Counts a verifyReceipt request whose body named `receiptData` (whitespace removed).
    func countReceiptRequest(_ receiptData: String, endpoint: String) {
        let key = ReceiptRequestCounts.key(receiptData)
        inner.withLock { $0.receiptRequests.count(key, endpoint: endpoint) }
    }

    /// Counts a Server API request arriving and draws its fault, as ``beginVerifyRequest(endpoint:)``.
    func beginServerAPIRequest(endpoint: String) -> (latency: Duration, action: SimulatorFaults.Action, forge: Bool) {
        inner.withLock { state in
            state.stats.serverAPIRequests += 1
            state.stats.serverAPIRequestsByEndpoint[endpoint, default: 0] += 1
            if state.serverAPIArrivals.count >= 10_000 { state.serverAPIArrivals.removeFirst(5_000) }
            state.serverAPIArrivals.append(.now)
            let faults = state.faults
            if let remaining = faults.remainingRequests {
                state.faults.remainingRequests = remaining - 1
                if remaining <= 1 { state.faults = .none }
                if remaining <= 0 { return (.zero, .none, false) }
            }
            return (.milliseconds(faults.latencyMilliseconds), faults.drawServerAPI(), faults.drawForgery())
        }
    }

    /// Draws the Google Play fault for one Developer API request (using up one of a limited
    /// number of faulty requests); Apple's faults and their counts are left alone.
    func beginPlayRequest() -> (latency: Duration, action: PlaySimulatorFaults.Action) {
        inner.withLock { state in
            guard let faults = state.faults.play else { return (.zero, .none) }
            if let remaining = faults.remainingRequests {
                state.faults.play?.remainingRequests = remaining - 1
                if remaining <= 1 { state.faults.play = nil }
                if remaining <= 0 { return (.zero, .none) }
            }
            return (.milliseconds(faults.latencyMilliseconds), faults.draw())
        }
    }

    /// Counts a Server API request answered, by what it was answered with.
    func endServerAPIRequest(answer: String) {
        inner.withLock { $0.stats.serverAPIAnswers[answer, default: 0] += 1 }
    }

    /// Counts a transaction created and a notification signed.
    func countTransactionCreated() { inner.withLock { $0.stats.transactionsCreated += 1 } }
    func countNotificationCreated() { inner.withLock { $0.stats.notificationsCreated += 1 } }

    /// Counts a verifyReceipt request answered, by what it was answered with.
    func endVerifyRequest(answer: String) {
        inner.withLock { state in
            state.inFlight -= 1
            state.stats.answers[answer, default: 0] += 1
        }
    }
}

/// Counters served by `GET /sim/stats`, so that tests can count Apple calls.
public struct SimulatorStats: Sendable, Hashable, Codable {
    /// verifyReceipt requests received, both endpoints.
    public var verifyReceiptRequests = 0
    /// Requests per endpoint: `production`, `sandbox`.
    public var requestsByEndpoint: [String: Int] = [:]
    /// Answers by kind: a status (`"0"`, `"21007"`), `http_503`, `malformed`, `hang`.
    public var answers: [String: Int] = [:]
    /// The most verifyReceipt requests in flight at once.
    public var maxInFlight = 0
    /// Receipts issued by `POST /sim/receipts`.
    public var receiptsCreated = 0
    /// Server API requests received, both environments.
    public var serverAPIRequests = 0
    /// Server API requests per environment: `production`, `sandbox`.
    public var serverAPIRequestsByEndpoint: [String: Int] = [:]
    /// Server API answers: `200`, `401`, an error code (`4040010`), `http_429`, `http_503`, …
    public var serverAPIAnswers: [String: Int] = [:]
    /// Transactions created by `POST /sim/transactions`.
    public var transactionsCreated = 0
    /// Notifications signed by `POST /sim/notifications`.
    public var notificationsCreated = 0

    /// Empty counters.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case verifyReceiptRequests = "verify_receipt_requests"
        case requestsByEndpoint = "requests_by_endpoint"
        case answers
        case maxInFlight = "max_in_flight"
        case receiptsCreated = "receipts_created"
        case serverAPIRequests = "server_api_requests"
        case serverAPIRequestsByEndpoint = "server_api_requests_by_endpoint"
        case serverAPIAnswers = "server_api_answers"
        case transactionsCreated = "transactions_created"
        case notificationsCreated = "notifications_created"
    }
}

/// verifyReceipt requests per receipt and endpoint, keyed by the lowercase hex SHA-256 of the
/// receipt data as sent (whitespace removed). Served by `GET /sim/stats/receipts`.
///
/// Bounded: after ``capacity`` distinct receipts, new ones are only counted in ``untracked``, so
/// a benchmark sending millions of receipts does not grow the simulator's memory.
public struct ReceiptRequestCounts: Sendable, Hashable, Codable {
    /// Distinct receipts tracked at most.
    public static let capacity = 100_000

    /// Receipt key → endpoint (`production`, `sandbox`) → requests.
    public var requests: [String: [String: Int]] = [:]
    /// Requests for receipts beyond ``capacity``.
    public var untracked = 0

    /// No requests yet.
    public init() {}

    /// The key of a receipt: the lowercase hex SHA-256 of its base64 text, whitespace removed.
    /// Byte by byte: base64 holds ASCII only, and `Character.isWhitespace` over a receipt's
    /// kilobytes cost a quarter of the simulator's time per verifyReceipt request.
    public static func key(_ receiptData: String) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        // Space, and tab through carriage return.
        let compact = receiptData.utf8.filter { $0 != 0x20 && !(0x09...0x0D).contains($0) }
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: compact) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// Requests for one receipt, both endpoints.
    public func total(_ receiptData: String) -> Int {
        requests[Self.key(receiptData)]?.values.reduce(0, +) ?? 0
    }

    mutating func count(_ key: String, endpoint: String) {
        if requests[key] == nil, requests.count >= Self.capacity {
            untracked += 1
            return
        }
        requests[key, default: [:]][endpoint, default: 0] += 1
    }
}
