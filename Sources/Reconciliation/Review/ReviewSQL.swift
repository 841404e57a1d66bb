import Postgres

/// The review queue's statements, in `sql/review/`: the queue's reads (``ReviewQueue``), its
/// decisions (``ReviewDecisions``), the bulk decisions and the judgement again before a decision.
enum ReviewSQL {
    static let count: SQLFile = "review/count.sql"
    static let page: SQLFile = "review/page.sql"
    static let countsByKind: SQLFile = "review/counts_by_kind.sql"
    static let exportOpen: SQLFile = "review/export_open.sql"
    static let exportFetch: SQLFile = "review/export_fetch.sql"
    static let detail: SQLFile = "review/detail.sql"
    static let events: SQLFile = "review/events.sql"
    static let nextInQueue: SQLFile = "review/next_in_queue.sql"
    static let runs: SQLFile = "review/runs.sql"
    static let run: SQLFile = "review/run.sql"
    static let lockItem: SQLFile = "review/lock_item.sql"
    static let claim: SQLFile = "review/claim.sql"
    static let takeOver: SQLFile = "review/take_over.sql"
    static let resolve: SQLFile = "review/resolve.sql"
    static let awaitApproval: SQLFile = "review/await_approval.sql"
    static let approve: SQLFile = "review/approve.sql"
    static let reject: SQLFile = "review/reject.sql"
    static let dismiss: SQLFile = "review/dismiss.sql"
    static let recordEvent: SQLFile = "review/record_event.sql"
    static let enqueueAction: SQLFile = "review/enqueue_action.sql"
    static let outboxOfItem: SQLFile = "review/outbox_of_item.sql"
    static let actionAccounts: SQLFile = "review/action_accounts.sql"
    static let bulkCandidates: SQLFile = "review/bulk_candidates.sql"
    static let bulkSummary: SQLFile = "review/bulk_summary.sql"
    static let rejudged: SQLFile = "review/rejudged.sql"
    static let autoResolveStale: SQLFile = "review/auto_resolve_stale.sql"
    static let pendingAction: SQLFile = "review/pending_action.sql"
    static let pendingOSLogin: SQLFile = "review/pending_os_login.sql"
}
