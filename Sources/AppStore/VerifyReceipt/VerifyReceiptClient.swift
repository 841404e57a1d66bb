import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import SwiftASN1

/// Verifies StoreKit 1 app receipts with Apple's verifyReceipt endpoint.
///
/// Production first; `21007` sends the receipt to the sandbox and `21008` back to production.
/// Transient trouble (HTTP 5xx, timeouts, connection errors, `21002`, `21005`, `21009`, and
/// `21100`–`21199` when Apple marks them retryable) is retried with exponential backoff and
/// jitter; when the retry budget is spent the outcome is ``VerifyReceiptOutcome/retryLater(reason:status:)``,
/// never `invalid`. `21004` throws ``VerifyReceiptConfigurationError``. At most
/// ``Configuration/maxConcurrentRequests`` requests are in flight at once over one shared
/// `HTTPClient`, so connections are reused.
public struct VerifyReceiptClient: Sendable {
    /// Where and how to call verifyReceipt.
    public struct Configuration: Sendable {
        /// Apple's production endpoint.
        public static let appleProductionURL = "https://buy.itunes.apple.com/verifyReceipt"
        /// Apple's sandbox endpoint.
        public static let appleSandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"

        /// Production endpoint (`APPLE_VERIFY_RECEIPT_URL`).
        public var productionURL: String
        /// Sandbox endpoint (`APPLE_VERIFY_RECEIPT_SANDBOX_URL`).
        public var sandboxURL: String
        /// Sent as `password` when set (`APPLE_SHARED_SECRET`); needed for subscription receipts.
        public var sharedSecret: AppleSharedSecret?
        /// `exclude-old-transactions`: false, because reconciliation needs every transaction.
        public var excludeOldTransactions: Bool
        /// Deadline of one HTTP exchange: connection, head and the whole body.
        public var requestTimeout: Duration
        /// Retries within one ``VerifyReceiptClient/verify(receiptData:logger:)`` call.
        public var retry: RetryPolicy
        /// Requests in flight at once (`RECONCILE_CONCURRENCY`), and connections kept per host.
        public var maxConcurrentRequests: Int

        /// Creates a configuration; the defaults are Apple's endpoints and production settings.
        public init(
            productionURL: String = Configuration.appleProductionURL,
            sandboxURL: String = Configuration.appleSandboxURL,
            sharedSecret: AppleSharedSecret? = nil,
            excludeOldTransactions: Bool = false,
            requestTimeout: Duration = .seconds(30),
            retry: RetryPolicy = RetryPolicy(),
            maxConcurrentRequests: Int = 16
        ) {
            self.productionURL = productionURL
            self.sandboxURL = sandboxURL
            self.sharedSecret = sharedSecret
            self.excludeOldTransactions = excludeOldTransactions
            self.requestTimeout = requestTimeout
            self.retry = retry
            self.maxConcurrentRequests = maxConcurrentRequests
        }
    }

    /// The configuration the client was made with.
    public let configuration: Configuration
    private let httpClient: HTTPClient
    private let limiter: ConcurrencyLimiter

    /// Creates a client on a caller-owned `HTTPClient` (see ``makeHTTPClient(configuration:)``);
    /// the caller shuts it down.
    public init(configuration: Configuration, httpClient: HTTPClient) {
        self.configuration = configuration
        self.httpClient = httpClient
        limiter = ConcurrencyLimiter(limit: configuration.maxConcurrentRequests)
    }

    /// An `HTTPClient` whose connection pool keeps as many connections per host as the client
    /// sends requests at once, so that every request reuses a warm connection.
    public static func makeHTTPClient(configuration: Configuration) -> HTTPClient {
        AppleHTTPClient.make(
            requestTimeout: configuration.requestTimeout, maxConcurrentRequests: configuration.maxConcurrentRequests)
    }

    /// Runs `body` with a client on its own `HTTPClient`, shut down afterwards.
    public static func withClient<T: Sendable>(
        configuration: Configuration, _ body: (VerifyReceiptClient) async throws -> T
    ) async throws -> T {
        try await AppleHTTPClient.using(makeHTTPClient(configuration: configuration)) { http in
            try await body(VerifyReceiptClient(configuration: configuration, httpClient: http))
        }
    }

    /// Verifies one base64 app receipt (or iOS 6 style transaction receipt) exactly as uploaded.
    ///
    /// Throws ``VerifyReceiptConfigurationError`` for `21004` and `CancellationError` when the
    /// task is cancelled; every other result is the returned outcome.
    public func verify(receiptData: String, logger: Logger) async throws -> VerifyReceiptOutcome {
        let payload: String
        switch ReceiptPayloadCheck.check(receiptData) {
        case .acceptable(let normalized): payload = normalized
        case .rejected(let reason): return .invalid(status: nil, reason: reason)
        }
        let body = try requestBody(payload)

        var endpoint = VerifiedReceipt.Environment.production
        var attempt = 0
        var reroutes = 0
        while true {
            try Task.checkCancellation()
            attempt += 1
            var logger = logger
            logger[metadataKey: "apple.endpoint"] = "\(endpoint)"
            logger[metadataKey: "apple.attempt"] = "\(attempt)"

            let failure: (reason: String, status: Int?)
            switch try await post(body, to: endpoint, logger: logger) {
            case .answered(let response):
                logger[metadataKey: "apple.status"] = "\(response.status)"
                switch Self.classify(response, endpoint: endpoint) {
                case .verified(let receipt):
                    logger.debug("verifyReceipt verified the receipt")
                    return .verified(receipt)
                case .reroute(let next):
                    // Routing is Apple telling us where the receipt lives, not a failure: it does
                    // not use up an attempt. Two hops are the most a consistent Apple can need.
                    guard reroutes < 2 else {
                        return .retryLater(
                            reason: "verifyReceipt keeps sending the receipt between production and sandbox",
                            status: response.status)
                    }
                    logger.debug("verifyReceipt routes the receipt to \(next)")
                    reroutes += 1
                    attempt -= 1
                    endpoint = next
                    continue
                case .invalid(let reason):
                    logger.debug("verifyReceipt rejected the receipt", metadata: ["reason": "\(reason)"])
                    return .invalid(status: response.status, reason: reason)
                case .configurationError:
                    logger.error("verifyReceipt rejected the shared secret")
                    throw VerifyReceiptConfigurationError(status: response.status, environment: endpoint)
                case .retryLaterNow(let reason):
                    logger.warning("verifyReceipt answered an unexpected status", metadata: ["reason": "\(reason)"])
                    return .retryLater(reason: reason, status: response.status)
                case .retryable(let reason):
                    failure = (reason, response.status)
                }
            case .transient(let reason):
                failure = (reason, nil)
            }

            guard attempt < configuration.retry.maxAttempts else {
                logger.warning(
                    "verifyReceipt still failing, leaving the receipt for a later run",
                    metadata: ["reason": "\(failure.reason)"])
                return .retryLater(
                    reason: "\(failure.reason) (after \(attempt) attempts)", status: failure.status)
            }
            let wait = configuration.retry.backoff(afterAttempt: attempt)
            logger.info(
                "verifyReceipt failed, retrying",
                metadata: ["reason": "\(failure.reason)", "retry.after_ms": "\(wait.milliseconds)"])
            try await Task.sleep(for: wait)
        }
    }

    // MARK: - One request

    private enum AttemptResult {
        case answered(VerifyReceiptResponse)
        case transient(String)
    }

    struct RequestBody: Codable, Equatable {
        var receiptData: String
        var password: String?
        var excludeOldTransactions: Bool

        enum CodingKeys: String, CodingKey {
            case receiptData = "receipt-data"
            case password
            case excludeOldTransactions = "exclude-old-transactions"
        }

        /// The body as JSON. A receipt is base64 and a shared secret hexadecimal: text JSON
        /// writes as it is, so the object is written directly (`JSONEncoder` cost as much as
        /// reading Apple's answer); anything else goes through `JSONEncoder`, which escapes it.
        func json() throws -> [UInt8] {
            func plain(_ text: String) -> Bool {
                text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
            }
            guard plain(receiptData), password.map(plain) ?? true else {
                return Array(try JSONEncoder().encode(self))
            }
            var json = #"{"receipt-data":""# + receiptData + "\""
            if let password { json += #","password":""# + password + "\"" }
            json += #","exclude-old-transactions":"# + (excludeOldTransactions ? "true" : "false") + "}"
            return Array(json.utf8)
        }
    }

    private func requestBody(_ payload: String) throws -> ByteBuffer {
        ByteBuffer(bytes: try RequestBody(
            receiptData: payload, password: configuration.sharedSecret?.value,
            excludeOldTransactions: configuration.excludeOldTransactions
        ).json())
    }

    private func url(for endpoint: VerifiedReceipt.Environment) -> String {
        endpoint == .sandbox ? configuration.sandboxURL : configuration.productionURL
    }

    /// One POST, holding a concurrency permit only while the request is in flight (not during
    /// backoff waits). Never logs the body: it carries the shared secret and the receipt.
    private func post(_ body: ByteBuffer, to endpoint: VerifiedReceipt.Environment, logger: Logger) async throws
        -> AttemptResult
    {
        var request = HTTPClientRequest(url: url(for: endpoint))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(body)

        return try await limiter.withPermit {
            let started = ContinuousClock.now
            do {
                // One deadline over the head and the whole body: an answer that stops after its
                // head (a stalled Apple, a connection a proxy dropped) is a timeout, not a hang.
                let answer = try await HTTPExchange.exchange(
                    request, within: configuration.requestTimeout, upTo: 32 << 20, http: httpClient, logger: logger)
                let bytes = answer.body
                let status = answer.status
                guard status == 200 else {
                    // Apple answers 200 even for bad receipts; anything else (5xx, a 4xx from a
                    // proxy or a wrong URL) says nothing about the receipt, so it never becomes
                    // `invalid`.
                    return .transient("HTTP \(status) from verifyReceipt")
                }
                do {
                    return .answered(try VerifyReceiptResponse.decode(Data(bytes.readableBytesView), answeredBy: endpoint))
                } catch {
                    return .transient("malformed verifyReceipt response: \(Self.describe(decoding: error))")
                }
            } catch let error as HTTPExchange.Timeout {
                if Task.isCancelled { throw CancellationError() }
                let elapsed = ContinuousClock.now - started
                return .transient("verifyReceipt timed out after \(elapsed.milliseconds) ms (\(error))")
            } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout
                || error == .connectTimeout
            {
                if Task.isCancelled { throw CancellationError() }
                let elapsed = ContinuousClock.now - started
                return .transient("verifyReceipt timed out after \(elapsed.milliseconds) ms (\(error))")
            } catch {
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                return .transient("connection error: \(error)")
            }
        }
    }

    private static func describe(decoding error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(key.stringValue) \(context.debugDescription)"
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context),
            DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }

    // MARK: - Apple's statuses

    enum Verdict: Sendable, Equatable {
        case verified(VerifiedReceipt)
        case reroute(VerifiedReceipt.Environment)
        case invalid(String)
        case configurationError
        case retryable(String)
        case retryLaterNow(String)
    }

    /// What a status means, from DOMAIN.md and Apple's documentation.
    static func classify(_ response: VerifyReceiptResponse, endpoint: VerifiedReceipt.Environment) -> Verdict {
        switch response.status {
        case 0, 21006:
            guard let receipt = response.receipt else { return .retryable("status \(response.status) without a receipt") }
            return .verified(receipt)
        case 21007:
            return endpoint == .production
                ? .reroute(.sandbox) : .retryLaterNow("the sandbox answered 21007 (a sandbox receipt)")
        case 21008:
            return endpoint == .sandbox
                ? .reroute(.production) : .retryLaterNow("production answered 21008 (a production receipt)")
        case 21002:
            return .retryable("21002: the receipt data is malformed, or Apple had a temporary issue")
        case 21005:
            return .retryable("21005: the receipt server is unavailable")
        case 21009:
            return .retryable("21009: internal data access error")
        case 21003:
            return .invalid("21003: the receipt could not be authenticated")
        case 21004:
            return .configurationError
        case 21010:
            return .invalid("21010: the receipt could not be authorized (account not found or deleted)")
        case 21100...21199:
            return response.isRetryable == true
                ? .retryable("\(response.status): internal error, retryable")
                : .invalid("\(response.status): internal error, not retryable")
        default:
            // 21000, 21001 and statuses Apple may add: not a verdict on the receipt.
            return .retryLaterNow("verifyReceipt answered unexpected status \(response.status)")
        }
    }
}

/// Rejects what cannot be a receipt before it costs a request to Apple.
enum ReceiptPayloadCheck {
    enum Result: Equatable {
        case acceptable(String)
        case rejected(String)
    }

    /// Uploads arrive with line breaks from clients; whitespace is dropped before sending. The
    /// local parser decides only what is certain without Apple: not base64, empty, absurdly
    /// large, neither a PKCS#7 structure nor an iOS 6 style transaction receipt, or a PKCS#7
    /// container cut short (its signature cannot be there). A receipt whose container is whole
    /// but whose content the parser finds odd still goes to Apple, the authority: a gap in the
    /// local parser must never turn a paid purchase into `invalid`.
    ///
    /// An app receipt is only read as far as the full parse could reject it here: its BER
    /// structure and ContentInfo, not the SignedData's fields nor the payload, which only yield
    /// errors that leave the receipt to Apple. That costs a fraction of the full parse, and the
    /// job runs it for every receipt it sends.
    static func check(_ receiptData: String) -> Result {
        let compact = compacted(receiptData)
        do {
            try checkContainer(compact)
        } catch {
            switch error {
            case .empty, .notBase64, .tooLarge, .notAReceipt:
                return .rejected("\(error)")
            case .truncated where containerIsCut(compact):
                // Apple answers 21002 to such data, which is retried for days before it counts.
                return .rejected("receipt is truncated: its PKCS#7 container ends before the length it announces")
            case .truncated, .unexpectedStructure, .malformedAttribute:
                break
            }
        }
        return .acceptable(compact)
    }

    /// Throws what `Receipt(base64Encoded:)` would throw when the error is one `check` rejects
    /// on (and sometimes a lesser one, `unexpectedStructure`, where it would not reject either).
    private static func checkContainer(_ compact: String) throws(ReceiptParsingError) {
        let bytes = try ReceiptBase64.decode(compact, limit: AppReceipt.maximumSize)
        guard bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == 0x30 else {
            // Empty, an iOS 6 style receipt or neither: rare, and read whole as before.
            _ = try Receipt(base64Encoded: compact)
            return
        }
        guard bytes.count <= AppReceipt.maximumSize else {
            throw .tooLarge(size: bytes.count, limit: AppReceipt.maximumSize)
        }
        try SignedData.checkContainer(bytes)
    }

    /// Whether the outer BER structure (ContentInfo down to every constructed node, the signer
    /// infos included) runs past the end of the data, as opposed to the signed content inside it.
    static func containerIsCut(_ base64: String) -> Bool {
        guard let bytes = try? ReceiptBase64.decode(base64, limit: AppReceipt.maximumSize) else { return false }
        do {
            _ = try BER.parse(bytes)
            return false
        } catch let error as ASN1Error {
            return error.code == .truncatedASN1Field
        } catch {
            return false
        }
    }

    /// The text without whitespace and newlines. Base64 is ASCII, and testing bytes is a hundred
    /// times cheaper than asking `CharacterSet` about each scalar, which only non-ASCII text needs.
    static func compacted(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            guard byte < 0x80 else {
                return String(text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
            }
            // The ASCII members of whitespacesAndNewlines: tab, LF, VT, FF, CR, space.
            if byte == 0x20 || (0x09...0x0D).contains(byte) { continue }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
