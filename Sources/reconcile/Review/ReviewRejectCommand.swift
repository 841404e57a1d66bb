import ArgumentParser
import Reconciliation

/// `reconcile review reject ID --note WHY [--by NAME]`: a second person turns a decision above
/// `RECONCILE_APPROVAL_ABOVE` down; the item is open again.
struct ReviewRejectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reject",
        abstract: "Reject a decision waiting for a second person (awaiting_approval → open).",
        discussion: """
            Nothing takes effect and nothing is queued; the item is open and unclaimed again, and the reason is \
            kept in its history. The person who decided may reject their own decision to withdraw it. \
            Rejecting again changes nothing.
            """
    )

    @Argument(help: "The review item id.")
    var id: Int64

    @Option(help: "Who rejects (default: RECONCILE_ACTOR, else your login name).")
    var by: String?

    @Option(help: "Why the decision is turned down (required).")
    var note: String

    @OptionGroup var database: ReviewDatabaseOptions

    func run() async throws {
        try await database.run { _ in
            print(try await database.decisions().reject(id: id, by: ActorName.resolve(by), note: note).message)
        }
    }
}
