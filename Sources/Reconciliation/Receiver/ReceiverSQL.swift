import Postgres

/// The notification receiver's statements, in `sql/receiver/` (run through ``SQLFile``).
enum ReceiverSQL {
    static let claimForward: SQLFile = "receiver/claim_forward.sql"
    static let dueJudgements: SQLFile = "receiver/due_judgements.sql"
    static let finishRun: SQLFile = "receiver/finish_run.sql"
    static let forwardAttempted: SQLFile = "receiver/forward_attempted.sql"
    static let judgedItems: SQLFile = "receiver/judged_items.sql"
    static let markJudged: SQLFile = "receiver/mark_judged.sql"
    static let metrics: SQLFile = "receiver/metrics.sql"
    static let noteJudgements: SQLFile = "receiver/note_judgements.sql"
    static let noteTransactions: SQLFile = "receiver/note_transactions.sql"
    static let pendingNotifications: SQLFile = "receiver/pending_notifications.sql"
    static let recentRuns: SQLFile = "receiver/recent_runs.sql"
    static let startRun: SQLFile = "receiver/start_run.sql"
    static let storeNotification: SQLFile = "receiver/store_notification.sql"
}
