import ArgumentParser
import Reconciliation

extension Resolution: ExpressibleByArgument {}

/// `reconcile review resolve ID --resolution R --by NAME [--note TEXT]`.
struct ReviewResolveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Decide a review item: granted, revoked, moved or no_action.",
        discussion: """
            granted queues a grant of Apple's product to the buyer; revoked queues taking the delivered goods \
            back from the delivery's account; moved queues moving them from that account to the buyer; \
            no_action queues nothing. Exactly one action per item, however often the command is repeated. \
            An item already resolved, dismissed or auto-resolved is refused (exit 1).
            """
    )

    @Argument(help: "The review item id.")
    var id: Int64

    @Option(help: "granted, revoked, moved or no_action.")
    var resolution: Resolution

    @Option(help: "Who decides (default: RECONCILE_ACTOR, else your login name).")
    var by: String?

    @Option(help: "Why (kept in the history and the outbox).")
    var note: String?

    @OptionGroup var database: ReviewDatabaseOptions
    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger()
        do {
            print(try await database.service().resolve(id: id, resolution: resolution, by: ActorName.resolve(by), note: note).message)
            // The decision reaches the app's webhook at once when one is configured.
            _ = try? await database.deliverOutbox(logger: logger)
        } catch {
            throw reviewFailure(error, logger: logger)
        }
    }
}
