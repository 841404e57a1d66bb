import ArgumentParser
import Foundation
import Logging
import Postgres
import Reconciliation

/// `reconcile outbox list|ack|deliver`: the staff decisions the app must carry out (SPEC section 13).
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "The decisions (grant, revoke, move) the app must carry out: list, ack, deliver.",
        discussion: """
            reconcile.action_outbox is the app's to consume: by SQL (see the README), by `reconcile outbox ack`, \
            or through the signed webhook (RECONCILE_OUTBOX_WEBHOOK_URL, RECONCILE_OUTBOX_WEBHOOK_SECRET) that \
            `reconcile outbox deliver` calls, as every run and every decision also do. Delivered is not consumed: \
            the app acks when it has acted.
            """,
        subcommands: [OutboxListCommand.self, OutboxAckCommand.self, OutboxDeliverCommand.self]
    )
}

struct OutboxListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List outbox rows, oldest first.")

    @Flag(help: "Only rows not consumed yet.")
    var pending = false

    @Flag(help: "Print a JSON array.")
    var json = false

    @OptionGroup var database: ReviewDatabaseOptions

    func run() async throws {
        try await database.run { _ in
            let rows = try await ActionOutbox(connection: database.connection()).list(pending: pending)
            if json {
                let array = "[" + (try rows.map { String(decoding: try $0.json(), as: UTF8.self) }).joined(separator: ",\n")
                    + "]"
                print(array)
                return
            }
            guard !rows.isEmpty else {
                print(pending ? "nothing pending in the outbox" : "the outbox is empty")
                return
            }
            for row in rows {
                let who = switch row.action {
                case .grant: "to \(terminalSafe(row.toUserID))"
                case .revoke: "from \(terminalSafe(row.fromUserID))"
                default: "from \(terminalSafe(row.fromUserID)) to \(terminalSafe(row.toUserID))"
                }
                let state = row.consumedAt.map { "consumed \(TimeExpression.format($0))" }
                    ?? row.deliveredAt.map { "delivered \(TimeExpression.format($0)), not consumed" } ?? "pending"
                print("#\(row.id) \(row.store) \(row.action) \(terminalSafe(row.productID)) × \(row.quantity ?? 1) "
                    + "\(who) "
                    + "(transaction \(terminalSafe(row.transactionID)), item \(row.reviewItemID), "
                    + "by \(terminalSafe(row.decidedBy)) \(TimeExpression.format(row.createdAt))): \(state)")
            }
        }
    }
}

struct OutboxAckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ack", abstract: "Mark outbox rows consumed (the app carried them out); acking twice is harmless.")

    @Argument(help: "Outbox row ids.")
    var ids: [Int64]

    @Option(help: "Who acks (default: RECONCILE_ACTOR, else your login name).")
    var by: String?

    @OptionGroup var database: ReviewDatabaseOptions

    func validate() throws {
        guard !ids.isEmpty, ids.count <= 10_000, ids.allSatisfy({ $0 > 0 }) else {
            throw ValidationError("give 1 to 10000 positive outbox row ids")
        }
    }

    func run() async throws {
        try await database.run { _ in
            let unknown = try await ActionOutbox(connection: database.connection()).ack(ids, by: ActorName.resolve(by))
            for id in unknown { FileHandle.standardError.write(Data("reconcile: no outbox row \(id)\n".utf8)) }
            print("acked \(ids.count - unknown.count) of \(ids.count)")
            if !unknown.isEmpty { throw ExitStatus.failed }
        }
    }
}

struct OutboxDeliverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliver",
        abstract: "POST every undelivered outbox row to RECONCILE_OUTBOX_WEBHOOK_URL, signed, until it answers 2xx.")

    @OptionGroup var database: ReviewDatabaseOptions

    func run() async throws {
        try await database.run { logger in
            do {
                guard let delivery = try await database.deliverOutbox(logger: logger) else {
                    FileHandle.standardError.write(Data("reconcile: RECONCILE_OUTBOX_WEBHOOK_URL is not set\n".utf8))
                    throw ExitStatus.usage
                }
                print("delivered \(delivery.delivered), failed \(delivery.failed)"
                    + (delivery.left > 0 ? ", not reached \(delivery.left)" : "") + " (tried again on the next delivery)")
                if delivery.failed + delivery.left > 0 { throw ExitStatus.failed }
            } catch is CancellationError {
                FileHandle.standardError.write(
                    Data("reconcile: interrupted; undelivered rows wait for the next delivery\n".utf8))
                throw ExitStatus.failed
            }
        }
    }
}

extension ReviewDatabaseOptions {
    /// A connection to the database of the settings.
    func connection() async throws -> Connection {
        try await settings().connect()
    }

    /// Delivers the outbox when a webhook is configured (nil when not). After a decision a failure
    /// is only logged: the row waits for the next delivery.
    func deliverOutbox(logger: Logger) async throws -> ActionOutbox.Delivery? {
        let settings = try await settings()
        // SIGTERM and SIGINT stop the delivery at its next wait; the row being sent stays leased
        // for its pass (a few minutes), then the next delivery sends it.
        return try await ShutdownSignals.cancellingOnSignal(logger: logger) {
            try await ActionOutbox.deliverIfConfigured(settings: settings, logger: logger)
        }
    }
}
