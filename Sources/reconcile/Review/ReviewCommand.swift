import ArgumentParser

/// `reconcile review`: the review queue for support staff (SPEC sections 6 and 7).
struct ReviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "review",
        abstract: "Work the manual-review queue: list, show, claim, resolve, dismiss, export.",
        discussion: """
            Items move open → in_review (claim) → resolved (granted, revoked, moved, no_action) or dismissed. \
            Every change is recorded in reconcile.review_events; granted, revoked and moved also queue exactly \
            one action for the app in reconcile.action_outbox. Repeating a command that already took effect \
            changes nothing and succeeds. The web page (reconcile serve) does the same through the same code.

            Exit codes: 0 done; 1 refused (e.g. the item is already decided) or failed; 64 bad usage.
            """,
        subcommands: [
            ReviewListCommand.self, ReviewShowCommand.self, ReviewClaimCommand.self, ReviewResolveCommand.self,
            ReviewDismissCommand.self, ReviewExportCommand.self,
        ]
    )
}
