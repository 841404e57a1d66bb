import ArgumentParser
import Reconciliation

extension Resolution: ExpressibleByArgument {}

/// `reconcile review resolve ID --resolution R --by NAME [--note TEXT]`, or with a filter instead of
/// an id: every item it takes (`--dry-run` to see them, `--yes` to go ahead).
struct ReviewResolveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Decide a review item: granted, revoked, moved or no_action.",
        discussion: """
            granted queues a grant of Apple's product to the buyer; revoked queues taking the delivered goods \
            back from the delivery's account; moved queues moving them from that account to the buyer; \
            no_action queues nothing. Exactly one action per item, however often the command is repeated. \
            An item already resolved, dismissed or auto-resolved is refused (exit 1). \
            With a filter (the options of `review list`, and --run, --max-amount CUR=N, --currency) instead of \
            an id, every open item it matches (and those you claimed) is decided the same way, one at a time: \
            --dry-run prints how many, their value and the first few (--dry-run --json: {"count": n, \
            "amount": {"CNY": 123.0}, "ids": [...]}, amounts in major units); --yes decides them (on a \
            terminal, typing the count does too). Run again after an interruption, it decides only what is left. \
            --max-amount CNY=30 --max-amount USD=5 takes items worth at most ¥30.00 or US$5.00 and none in \
            another currency; a bare --max-amount 30 needs --currency, which names its currency.
            """
    )

    @Option(help: "granted, revoked, moved or no_action.")
    var resolution: Resolution

    @Option(help: "Who decides (default: RECONCILE_ACTOR, else your login name).")
    var by: String?

    @Option(help: "Why (kept in the history and the outbox).")
    var note: String?

    @OptionGroup var selection: ItemSelection
    @OptionGroup var database: ReviewDatabaseOptions

    func run() async throws {
        try await database.run { logger in
            try await selection.decide(
                .resolve(resolution), verb: "resolve as \(resolution.rawValue)", note: note, by: ActorName.resolve(by),
                database: database, logger: logger)
        }
    }
}
