import ArgumentParser

/// `reconcile review`: the review queue for support staff (SPEC sections 6 and 7).
struct ReviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "review",
        abstract: "Work the manual-review queue: list, show, claim, resolve, dismiss, approve, reject, export.",
        discussion: """
            Items move open → in_review (claim) → resolved (granted, revoked, moved, no_action) or dismissed. \
            Every change is recorded in reconcile.review_events; granted, revoked and moved also queue exactly \
            one action for the app in reconcile.action_outbox. Repeating a command that already took effect \
            changes nothing and succeeds. The web page (reconcile serve) does the same through the same code.

            With RECONCILE_APPROVAL_ABOVE set (e.g. CNY=648,USD=99), a granted, revoked or moved decision on an \
            item worth more (or of unknown value) waits in awaiting_approval, queueing nothing, until another \
            person runs `review approve ID` (it takes effect) or `review reject ID --note WHY` (open again). \
            The threshold is recorded in the database by every process configured with it, and a decision \
            applies the stricter of its own setting and the recorded one (`review approval-threshold`). On the \
            command line each decision records the operating-system login beside --by, and an approval from \
            the login that made the decision is refused.

            Exit codes: 0 done; 1 refused (e.g. the item is already decided) or failed; 64 bad usage.
            """,
        subcommands: [
            ReviewListCommand.self, ReviewShowCommand.self, ReviewClaimCommand.self, ReviewResolveCommand.self,
            ReviewDismissCommand.self, ReviewApproveCommand.self, ReviewRejectCommand.self, ReviewExportCommand.self,
            ReviewApprovalThresholdCommand.self,
        ]
    )
}
