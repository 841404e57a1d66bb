import ArgumentParser

@main
struct Reconcile: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Find the App Store in-app purchases an app lost.",
        discussion: """
            Re-verifies the receipts clients uploaded with Apple, diffs Apple's transactions against \
            the delivery ledger inside PostgreSQL, and writes a report and a manual-review queue.

            Exit codes: 0 completed; 1 failed; 2 completed with new findings (with --fail-on-findings); \
            3 another run holds the lock; 64 bad usage or configuration.
            """,
        subcommands: [
            MigrateCommand.self, RunCommand.self, InspectCommand.self, CheckCommand.self, ReviewCommand.self,
            ServeCommand.self, WebUserCommand.self, LookupCommand.self, OutboxCommand.self,
            NotificationsCommand.self, PolicyCommand.self, InsightsCommand.self,
        ],
        // `reconcile --since 36h` and plain `reconcile` are the nightly run (SPEC section 7).
        defaultSubcommand: RunCommand.self
    )
}
