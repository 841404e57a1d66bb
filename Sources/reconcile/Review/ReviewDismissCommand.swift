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

    @Argument(help: "The review item id (or give a filter instead).")
    var id: Int64?

    @Option(help: "Who decides (default: RECONCILE_ACTOR, else your login name).")
    var by: String?

    @Option(help: "Why it is not a problem.")
    var note: String

    @OptionGroup var filter: ReviewFilterOptions
    @OptionGroup var bulk: BulkOptions
    @OptionGroup var database: ReviewDatabaseOptions
    @OptionGroup var common: CommonOptions

    func validate() throws { try ItemSelection.validate(id: id, filter: filter, bulk: bulk) }

    func run() async throws {
        let logger = common.makeLogger()
        do {
            guard let id else {
                return try await ItemSelection.decide(
                    .dismiss, verb: "dismiss", note: note, filter: filter, bulk: bulk, person: ActorName.resolve(by),
                    database: database, logger: logger)
            }
            print(try await database.service().dismiss(id: id, by: ActorName.resolve(by), note: note).message)
            // The decision reaches the app's webhook at once when one is configured.
            _ = try? await database.deliverOutbox(logger: logger)
        } catch {
            throw reviewFailure(error, logger: logger)
        }
    }
}
