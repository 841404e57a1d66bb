import ArgumentParser
import Reconciliation

/// `reconcile review dismiss ID --by NAME --note TEXT`.
struct ReviewDismissCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dismiss",
        abstract: "Dismiss a review item: not a real problem, nothing for the app to do.",
        discussion: "A note saying why is required. An item already decided or auto-resolved is refused (exit 1)."
    )

    @Argument(help: "The review item id.")
    var id: Int64

    @Option(help: "Who decides (default: RECONCILE_ACTOR, else your login name).")
    var by: String?

    @Option(help: "Why it is not a problem.")
    var note: String

    @OptionGroup var database: ReviewDatabaseOptions
    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger()
        do {
            print(try await database.service().dismiss(id: id, by: ActorName.resolve(by), note: note).message)
            // The decision reaches the app's webhook at once when one is configured.
            _ = try? await database.deliverOutbox(logger: logger)
        } catch {
            throw reviewFailure(error, logger: logger)
        }
    }
}
