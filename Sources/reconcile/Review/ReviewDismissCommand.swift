import ArgumentParser
import Reconciliation

/// `reconcile review dismiss ID --by NAME --note TEXT`, or with a filter instead of an id.
struct ReviewDismissCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dismiss",
        abstract: "Dismiss a review item: not a real problem, nothing for the app to do.",
        discussion: """
            A note saying why is required. An item already decided or auto-resolved is refused (exit 1). \
            With a filter instead of an id, every open item it matches (and those you claimed) is dismissed, \
            as `review resolve` does with one: --dry-run, --yes, --limit.
            """
    )

    @Option(help: "Who decides (default: RECONCILE_ACTOR, else your login name).")
    var by: String?

    @Option(help: "Why it is not a problem.")
    var note: String

    @OptionGroup var selection: ItemSelection
    @OptionGroup var database: ReviewDatabaseOptions

    func run() async throws {
        try await database.run { logger in
            try await selection.decide(
                .dismiss, verb: "dismiss", note: note, by: ActorName.resolve(by), database: database, logger: logger)
        }
    }
}
