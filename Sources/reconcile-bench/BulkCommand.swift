import ArgumentParser
import Foundation
import Postgres
import Reconciliation

/// `reconcile-bench bulk`: a bulk decision (SPEC sections 12 and 17). `--items` open
/// `missed_delivery` items granted by `reconcile review resolve --kind missed_delivery --yes`, timed
/// as the whole process a person runs; against as many items decided by bare per-item transactions
/// doing the same writes (the lock, the event, the status, the outbox row), in the same database
/// (DATABASE_URL, migrated) just before.
struct BulkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bulk", abstract: "A bulk decision of --items items against bare per-item transactions.")

    @Option(help: "The reconcile binary whose review resolve is timed.")
    var reconcile: String

    @Option(help: "Items decided, by each of the two.")
    var items = 5000

    static let actor = "bench"

    func validate() throws {
        guard (1...1_000_000).contains(items) else { throw ValidationError("--items must be 1 to 1000000") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let connection = try Connection(url: environment["DATABASE_URL"])

        let bare = try plant("BARE", on: connection)
        let bareSeconds = try Self.timed {
            for id in bare { try Self.decideByHand(id, on: connection) }
        }
        try expectDecided(bare, on: connection)

        let bulk = try plant("BULK", on: connection)
        let bulkSeconds = try Self.timed {
            try Self.resolve(reconcile, limit: items, environment: environment)
        }
        try expectDecided(bulk, on: connection)

        Bench.emit("bulk_items", "\(items)")
        Bench.emit("bulk_bare_items_per_second", Bench.decimal(Double(items) / bareSeconds))
        Bench.emit("bulk_review_resolve_seconds", Bench.seconds(bulkSeconds))
        Bench.emit("bulk_review_resolve_items_per_second", Bench.decimal(Double(items) / bulkSeconds))
        Bench.emit("bulk_review_resolve_vs_bare", String(format: "%.2f", bareSeconds / bulkSeconds))
    }

    /// The command's statements (`sql/bench/`).
    enum SQL {
        static let plant: SQLFile = "bench/bulk_plant.sql"
        static let lock: SQLFile = "bench/bulk_bare_lock.sql"
        static let event: SQLFile = "bench/bulk_bare_event.sql"
        static let resolve: SQLFile = "bench/bulk_bare_resolve.sql"
        static let outbox: SQLFile = "bench/bulk_bare_outbox.sql"
        static let decided: SQLFile = "bench/bulk_decided.sql"
    }

    private func plant(_ set: String, on connection: Connection) throws -> [Int64] {
        try connection.query(SQL.plant, ["items": items, "set": set]).map { try $0.decode(Int64.self, at: 0) }
    }

    private func expectDecided(_ ids: [Int64], on connection: Connection) throws {
        let decided = try connection.query(SQL.decided, ["ids": ids])[0].decode(Int.self, at: 0)
        guard decided == ids.count else { throw ValidationError("\(decided) of \(ids.count) items were decided") }
    }

    /// One item granted in a transaction of its own, with nothing but the writes a decision needs.
    static func decideByHand(_ id: Int64, on connection: Connection) throws {
        try connection.transaction {
            let item = try connection.query(SQL.lock, ["id": id])[0]
            let buyer: String? = try item["grant_to_user_id"]
            let event = try connection.query(SQL.event, ["id": id, "actor": actor, "to_user_id": buyer])[0]
                .decode(Int64.self, at: 0)
            try connection.execute(SQL.resolve, ["id": id, "actor": actor])
            try connection.execute(SQL.outbox, [
                "id": id, "event_id": event, "transaction_id": try item["transaction_id"] as String?,
                "product_id": try item["grant_product_id"] as String?, "quantity": try item["grant_quantity"] as Int?,
                "to_user_id": buyer, "actor": actor,
            ])
        }
    }

    /// `reconcile review resolve` with a filter and `--yes`, as a person runs it.
    static func resolve(_ reconcile: String, limit: Int, environment: [String: String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: reconcile)
        process.arguments = [
            "review", "resolve", "--kind", "missed_delivery", "--resolution", "granted", "--by", actor, "--yes",
            "--limit", "\(limit)",
        ]
        // The bundle the planted purchases belong to: the decisions judge their items again.
        process.environment = environment.merging(["RECONCILE_BUNDLE_IDS": "com.hncs.szj"]) { $1 }
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let progress = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError(
                "reconcile review resolve exited \(process.terminationStatus):\n\(String(decoding: progress, as: UTF8.self))")
        }
    }

    static func timed(_ body: () throws -> Void) throws -> Double {
        let started = ContinuousClock.now
        try body()
        return (ContinuousClock.now - started).seconds
    }
}
