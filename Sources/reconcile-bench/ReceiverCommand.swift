import AppStore
import AppStoreSimulator
import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import Postgres
import Reconciliation
import Synchronization

/// `reconcile-bench receiver`: the notification receiver (SPEC sections 12 and 16), as Apple meets
/// it. Starts the real `reconcile notifications receive` against the database of DATABASE_URL
/// (migrated, empty), with this process's simulator as Apple's Server API, and measures:
///
/// - notifications stored per second, posted over `--connections` connections, and the p95 time
///   to the 200; against the bare rate of single-row committed INSERTs of the same bodies over as
///   many connections, measured just before;
/// - a refund notification to its `refunded_delivery` item, and a `CONSUMPTION_REQUEST` to its
///   answer accepted by Apple: p95 with the receiver's default settings (consumption answers on).
///
/// The simulator's CA signs every notification ahead, so that signing is not measured.
struct ReceiverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receiver",
        abstract: "The notification receiver: stored per second against bare INSERTs, and its latencies.")

    @OptionGroup var sim: SimulatorStateOptions

    @Option(help: "The reconcile binary to start as the receiver.")
    var reconcile: String

    @Option(help: "Notifications posted for the throughput.")
    var notifications = 5000

    @Option(help: "Connections they are posted over, and the bare INSERTs' connections.")
    var connections = 4

    @Option(help: "Refund notifications, and as many refund requests, for the latencies.")
    var refunds = 40

    @Option(help: "Seconds between two refunds (and two refund requests) posted.")
    var pace = 0.25

    func validate() throws {
        guard (1...1_000_000).contains(notifications), (1...64).contains(connections), (1...10_000).contains(refunds),
            (0...60).contains(pace)
        else { throw ValidationError("--notifications, --connections, --refunds or --pace out of range") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let databaseURL = environment["DATABASE_URL"] else { throw ValidationError("DATABASE_URL is not set") }
        let connection = try Connection(url: databaseURL)
        let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let state = sim.directory
        let simulator = try sim.simulator(logger: quiet)
        try await simulator.withRunning { running in
            let bodies = try (0..<notifications).map { _ in try Self.purchaseNotification(simulator) }
            let latency = try Self.latencyFixtures(refunds, simulator: simulator, on: connection)
            Bench.log("signed \(bodies.count + 2 * refunds) notifications")

            let bare = try await Self.bareInserts(bodies, connections: connections, url: databaseURL)
            Bench.emit("receiver_connections", "\(connections)")
            Bench.emit("receiver_bare_inserts_per_second", Bench.decimal(bare))

            let work = FileManager.default.temporaryDirectory.appendingPathComponent("bench-receiver-\(UUID())")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            let receiver = try Self.startReceiver(
                reconcile, environment: Self.receiverEnvironment(environment, running: running, state: state),
                work: work)
            defer {
                receiver.process.terminate()
                receiver.process.waitUntilExit()
            }
            let url = "http://127.0.0.1:\(receiver.port)/apple/notifications"

            let posted = try await Self.post(bodies, to: url, connections: connections)
            let stored = try connection.query(SQL.stored, [:])[0].decode(Int.self, at: 0)
            guard stored == bodies.count else {
                throw ValidationError("the receiver stored \(stored) of \(bodies.count) notifications")
            }
            let rate = Double(bodies.count) / posted.seconds
            Bench.emit("receiver_notifications", "\(bodies.count)")
            Bench.emit("receiver_stored_per_second", Bench.decimal(rate))
            Bench.emit("receiver_stored_vs_bare_inserts", String(format: "%.2f", rate / bare))
            Bench.emit("receiver_p50_ms_to_200", Bench.decimal(Self.percentile(posted.milliseconds, 0.5)))
            Bench.emit("receiver_p95_ms_to_200", Bench.decimal(Self.percentile(posted.milliseconds, 0.95)))

            // The worker applies what was stored in the background; the latencies are taken once
            // it has caught up, so that they are a notification's own.
            let backlog = ContinuousClock.now
            while try connection.query(SQL.backlog, [:])[0].decode(Int.self, at: 0) > 0 {
                try await Task.sleep(for: .milliseconds(100))
                guard ContinuousClock.now - backlog < .seconds(600) else {
                    throw ValidationError("the receiver did not apply its notifications within 10 minutes")
                }
            }
            Bench.emit("receiver_backlog_applied_seconds", Bench.seconds((ContinuousClock.now - backlog).seconds))

            let (refundSeconds, answerSeconds) = try await Self.latencies(
                latency, to: url, pace: .milliseconds(Int64(pace * 1000)), on: connection)
            Bench.emit("receiver_refunds", "\(refunds)")
            Bench.emit("receiver_refund_to_item_p95_seconds", Bench.seconds(Self.percentile(refundSeconds, 0.95)))
            Bench.emit(
                "receiver_refund_request_to_answer_p95_seconds", Bench.seconds(Self.percentile(answerSeconds, 0.95)))
        }
    }

    /// The command's statements (`sql/bench/`).
    enum SQL {
        static let bareTable: SQLFile = "bench/receiver_bare_table.sql"
        static let bareInsert: SQLFile = "bench/receiver_bare_insert.sql"
        static let plant: SQLFile = "bench/receiver_plant_deliveries.sql"
        static let stored: SQLFile = "bench/receiver_stored.sql"
        static let backlog: SQLFile = "bench/receiver_backlog.sql"
        static let arrived: SQLFile = "bench/receiver_arrived.sql"
    }

    // MARK: What Apple posts

    /// Apple's body of one notification.
    static func body(_ signed: SignedNotificationBody) -> String { #"{"signedPayload":"\#(signed.signedPayload)"}"# }

    /// A purchase made now, as Apple notifies it (judged only once its grace period has passed).
    static func purchaseNotification(_ simulator: AppStoreSimulator) throws -> String {
        let bought = try simulator.createTransaction(SimulatedTransaction(
            productId: BenchWorld.consumables[0].0, bundleId: BenchWorld.bundle, environment: .production,
            type: .consumable, quantity: 1, purchaseDate: Date(), price: 6_000, currency: "CNY"))
        return body(try simulator.signNotification(type: .oneTimeCharge, transactionId: bought.transactionId))
    }

    /// One transaction of a latency measurement and its notification.
    struct Pending: Sendable {
        var transactionID: String
        var body: String
        var kind: String
    }

    /// `count` packs bought a day ago and credited, refunded and notified; and as many credited
    /// to accounts that consented to share their consumption, each with Apple's refund request.
    static func latencyFixtures(_ count: Int, simulator: AppStoreSimulator, on connection: Connection) throws
        -> [(refund: Pending, request: Pending)]
    {
        func pack(_ customer: String) throws -> String {
            try simulator.createTransaction(SimulatedTransaction(
                productId: BenchWorld.consumables[0].0, customer: customer, bundleId: BenchWorld.bundle,
                environment: .production, type: .consumable, quantity: 1, purchaseDate: Date().addingTimeInterval(-86_400),
                price: 6_000, currency: "CNY")).transactionId
        }
        let refunded = try (0..<count).map { try pack("bench-refund-\($0)") }
        let requested = try (0..<count).map { try pack("bench-request-\($0)") }
        try connection.execute(SQL.plant, [
            "transaction_ids": refunded + requested,
            "user_ids": refunded.indices.map { "refund-player-\($0)" } + requested.indices.map { "request-player-\($0)" },
            "product_id": BenchWorld.consumables[0].0, "consenting": requested.indices.map { "request-player-\($0)" },
        ])
        return try zip(refunded, requested).map { refund, request in
            _ = try simulator.refundTransaction(refund)
            return (
                Pending(
                    transactionID: refund,
                    body: body(try simulator.signNotification(type: .refund, transactionId: refund)), kind: "refund"),
                Pending(
                    transactionID: request,
                    body: body(try simulator.signNotification(type: .consumptionRequest, transactionId: request)),
                    kind: "refund request")
            )
        }
    }

    // MARK: The receiver

    static func receiverEnvironment(_ base: [String: String], running: RunningSimulator, state: URL) -> [String: String] {
        var environment = base
        environment["RECONCILE_BUNDLE_IDS"] = BenchWorld.bundle
        environment["APPLE_ROOT_CERTIFICATES"] = state.appendingPathComponent(SimulatorCA.FileName.rootCertificate).path
        environment["APPLE_VERIFY_RECEIPT_URL"] = running.productionURL
        environment["APPLE_VERIFY_RECEIPT_SANDBOX_URL"] = running.sandboxURL
        environment["APPSTORE_API_URL"] = running.serverAPIURL
        environment["APPSTORE_API_SANDBOX_URL"] = running.serverAPISandboxURL
        environment["APPSTORE_KEY_ID"] = running.simulator.configuration.apiKeyID
        environment["APPSTORE_ISSUER_ID"] = running.simulator.configuration.issuerID
        environment["APPSTORE_PRIVATE_KEY_FILE"] = state.appendingPathComponent(SimulatorAPIKey.privateKeyFileName).path
        environment["RECONCILE_CONSUMPTION_ANSWERS"] = "on"
        return environment
    }

    /// `reconcile notifications receive` on a free port, once it listens.
    static func startReceiver(_ reconcile: String, environment: [String: String], work: URL) throws
        -> (process: Process, port: Int)
    {
        let portFile = work.appendingPathComponent("port")
        let log = work.appendingPathComponent("receiver.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: reconcile)
        process.arguments = [
            "notifications", "receive", "--listen", "127.0.0.1:0", "--port-file", portFile.path, "--log-level", "warning",
        ]
        process.environment = environment
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let started = Date()
        while Date().timeIntervalSince(started) < 60 {
            if let text = try? String(contentsOf: portFile, encoding: .utf8),
                let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                return (process, port)
            }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.terminate()
        let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw ValidationError("reconcile notifications receive did not start:\n\(logged)")
    }

    // MARK: Measurements

    /// Single-row committed INSERTs of `bodies`, over `connections` connections at once, a second.
    static func bareInserts(_ bodies: [String], connections: Int, url: String) async throws -> Double {
        let setup = try Connection(url: url)
        try setup.execute(SQL.bareTable, [:])
        let sessions = try (0..<connections).map { _ in Shared(try Connection(url: url)) }
        let started = ContinuousClock.now
        try await Bench.onThreads(connections) { worker in
            let connection = sessions[worker].value
            for index in stride(from: worker, to: bodies.count, by: connections) {
                try connection.execute(SQL.bareInsert, ["body": bodies[index], "notification_uuid": UUID()])
            }
        }
        return Double(bodies.count) / (ContinuousClock.now - started).seconds
    }

    /// Posts every body, `connections` at a time over as many kept-alive connections; the wall
    /// time and each post's milliseconds to its 200.
    static func post(_ bodies: [String], to url: String, connections: Int) async throws
        -> (seconds: Double, milliseconds: [Double])
    {
        try await withPoster(connections: connections) { poster in
            // Every connection opened before the clock starts.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<connections { group.addTask { _ = try await poster.post("{}", to: url, expecting: 400) } }
                try await group.waitForAll()
            }
            let next = Counter()
            let started = ContinuousClock.now
            let milliseconds = try await withThrowingTaskGroup(of: [Double].self) { group in
                for _ in 0..<connections {
                    group.addTask { [poster] in
                        var times: [Double] = []
                        while true {
                            let index = next.take()
                            guard index < bodies.count else { return times }
                            times.append(try await poster.post(bodies[index], to: url) * 1000)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            return ((ContinuousClock.now - started).seconds, milliseconds)
        }
    }

    /// Posts each refund and refund request `pace` apart, and watches the database for each one's
    /// item or accepted answer: seconds from the post to it being there, per kind.
    static func latencies(
        _ fixtures: [(refund: Pending, request: Pending)], to url: String, pace: Duration, on connection: Connection
    ) async throws -> (refunds: [Double], answers: [Double]) {
        let posted = PostTimes()
        let all = fixtures.flatMap { [$0.refund, $0.request] }
        return try await withPoster(connections: 2) { poster in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { [poster] in
                    for (refund, request) in fixtures {
                        for pending in [refund, request] {
                            posted.note(pending.transactionID)
                            _ = try await poster.post(pending.body, to: url)
                        }
                        try await Task.sleep(for: pace)
                    }
                }
                var arrived: [String: Double] = [:]
                let deadline = ContinuousClock.now + .seconds(120) + pace * fixtures.count
                while arrived.count < all.count, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                    let rows = try connection.query(SQL.arrived, [
                        "refunded": fixtures.map(\.refund.transactionID),
                        "requested": fixtures.map(\.request.transactionID),
                    ])
                    let now = ContinuousClock.now
                    for row in rows {
                        let id = try row.decode(String.self, at: 0)
                        guard arrived[id] == nil, let sent = posted[id] else { continue }
                        arrived[id] = (now - sent).seconds
                    }
                }
                try await group.waitForAll()
                let missing = all.filter { arrived[$0.transactionID] == nil }
                guard missing.isEmpty else {
                    throw ValidationError(
                        "not within 120 s: \(missing.count) of \(all.count) (\(Set(missing.map(\.kind)).sorted()))")
                }
                return (fixtures.compactMap { arrived[$0.refund.transactionID] },
                        fixtures.compactMap { arrived[$0.request.transactionID] })
            }
        }
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    // MARK: Posting

    /// Posts bodies as Apple does, over at most `connections` kept-alive connections.
    struct Poster: Sendable {
        let http: HTTPClient

        /// Seconds to the expected answer.
        func post(_ body: String, to url: String, expecting status: UInt = 200) async throws -> Double {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            let started = ContinuousClock.now
            let response = try await http.execute(request, timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 16)
            let elapsed = (ContinuousClock.now - started).seconds
            guard response.status.code == status else {
                throw ValidationError("the receiver answered \(response.status.code) where \(status) was expected")
            }
            return elapsed
        }
    }

    static func withPoster<T: Sendable>(connections: Int, _ body: (Poster) async throws -> T) async throws -> T {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        return try await HTTPClient.withHTTPClient(configuration: configuration) { try await body(Poster(http: $0)) }
    }
}

/// The next body to post, shared by the posting tasks.
final class Counter: Sendable {
    private let value = Atomic(0)

    func take() -> Int { value.wrappingAdd(1, ordering: .relaxed).oldValue }
}

/// When each notification was posted, by transaction.
final class PostTimes: Sendable {
    private let times = Mutex<[String: ContinuousClock.Instant]>([:])

    func note(_ transactionID: String) { times.withLock { $0[transactionID] = ContinuousClock.now } }

    subscript(_ transactionID: String) -> ContinuousClock.Instant? { times.withLock { $0[transactionID] } }
}

/// A value handed to one thread at a time (a connection to its worker thread).
struct Shared<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
