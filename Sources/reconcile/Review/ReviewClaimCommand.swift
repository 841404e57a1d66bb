import ArgumentParser
import Reconciliation

/// `reconcile review claim ID --by NAME [--force]`.
struct ReviewClaimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "claim",
        abstract: "Claim a review item (open → in_review) so others know you are on it.",
        discussion: "Claiming your own claim again does nothing. An item someone else claimed needs --force."
    )

    @Argument(help: "The review item id.")
    var id: Int64

    @Option(help: "Who is claiming it (default: RECONCILE_ACTOR, else your login name).")
    var by: String?

    @Flag(help: "Take the item over from whoever claimed it.")
    var force = false

    @OptionGroup var database: ReviewDatabaseOptions

    func run() async throws {
        try await database.run { _ in
            print(try await database.decisions().claim(id: id, by: ActorName.resolve(by), force: force).message)
        }
    }
}
