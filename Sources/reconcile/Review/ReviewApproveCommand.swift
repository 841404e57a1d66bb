import ArgumentParser
import Reconciliation

/// `reconcile review approve ID [--by NAME] [--note TEXT]`: a second person lets a decision above
/// `RECONCILE_APPROVAL_ABOVE` take effect.
struct ReviewApproveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "Approve a decision waiting for a second person (awaiting_approval → resolved).",
        discussion: """
            With RECONCILE_APPROVAL_ABOVE set (e.g. CNY=648,USD=99), a decision on an item worth more waits in \
            awaiting_approval and queues nothing. Approving it makes it take effect as it was decided (the \
            decider's resolution and note) and queues its one action for the app. The person who decided cannot \
            approve it (exit 1, nothing changes). Approving again changes nothing. \
            List what waits with `reconcile review list --status awaiting_approval`.
            """
    )

    @Argument(help: "The review item id.")
    var id: Int64

    @Option(help: "Who approves (default: RECONCILE_ACTOR, else your login name).")
    var by: String?

    @Option(help: "A remark kept with the approval in the history.")
    var note: String?

    @OptionGroup var database: ReviewDatabaseOptions

    func run() async throws {
        try await database.run { logger in
            print(try await database.decisions().approve(id: id, by: ActorName.resolve(by), note: note).message)
            // The decision reaches the app's webhook at once when one is configured.
            _ = try? await database.deliverOutbox(logger: logger)
        }
    }
}
