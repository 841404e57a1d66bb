import Foundation
import Postgres

/// Where a review item stands (SPEC section 6). Only the job moves items to and from `auto_resolved`.
public enum ReviewStatus: String, Sendable, CaseIterable, Codable {
    case open
    case inReview = "in_review"
    case resolved
    case dismissed
    case autoResolved = "auto_resolved"

    /// A person decided; nothing may change it any more.
    public var isDecided: Bool { self == .resolved || self == .dismissed }
}

/// A person's decision on a review item.
public enum Resolution: String, Sendable, CaseIterable, Codable {
    case granted
    case revoked
    case moved
    case noAction = "no_action"

    /// What the app's fulfilment system must do about it, if anything.
    public var action: OutboxAction? {
        switch self {
        case .granted: .grant
        case .revoked: .revoke
        case .moved: .move
        case .noAction: nil
        }
    }
}

/// An action the app must carry out, as written to `reconcile.action_outbox`.
public enum OutboxAction: String, Sendable, CaseIterable, Codable {
    case grant
    case revoke
    case move
}

/// One row of `reconcile.review_items`.
public struct ReviewItem: Sendable, Equatable {
    /// The row id.
    public var id: Int64
    /// Kind plus the identity of the discrepancy; one item per condition ever.
    public var fingerprint: String
    /// The finding kind as stored; `FindingKind(rawValue:)` types it.
    public var kind: String
    /// `high`, `medium` or `low`.
    public var severity: String
    /// Where the item stands.
    public var status: ReviewStatus
    /// Apple's transaction id.
    public var transactionID: String?
    /// Apple's original transaction id.
    public var originalTransactionID: String?
    /// The account the finding is about (for a grant or a move: the buyer; otherwise the delivery's account).
    public var userID: String?
    /// The product (Apple's, when Apple knows the transaction).
    public var productID: String?
    /// The upload a per-upload finding (`foreign_bundle`) is about.
    public var uploadID: Int64?
    /// `grant`, `revoke`, `move` or `investigate`.
    public var suggestedAction: String
    /// The run that first detected it.
    public var firstSeenRun: Int64
    /// The last run that detected it.
    public var lastSeenRun: Int64
    /// When it was created.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
    /// Who claimed it.
    public var assignee: String?
    /// The decision, when resolved.
    public var resolution: Resolution?
    /// Who resolved or dismissed it.
    public var resolvedBy: String?
    /// When it was resolved or dismissed.
    public var resolvedAt: Date?
    /// The note left with the decision.
    public var note: String?

    /// The columns `init(row:)` reads, for `SELECT`s.
    static let columns = """
        id, fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id, \
        upload_id, suggested_action, first_seen_run, last_seen_run, created_at, updated_at, assignee, resolution, \
        resolved_by, resolved_at, note
        """

    init(row: Row) throws {
        id = try row["id"]
        fingerprint = try row["fingerprint"]
        kind = try row["kind"]
        severity = try row["severity"]
        let rawStatus: String = try row["status"]
        guard let status = ReviewStatus(rawValue: rawStatus) else {
            throw PostgresError(kind: .decoding, message: "review item \(id) has unknown status \(rawStatus)")
        }
        self.status = status
        transactionID = try row["transaction_id"]
        originalTransactionID = try row["original_transaction_id"]
        userID = try row["user_id"]
        productID = try row["product_id"]
        uploadID = try row["upload_id"]
        suggestedAction = try row["suggested_action"]
        firstSeenRun = try row["first_seen_run"]
        lastSeenRun = try row["last_seen_run"]
        createdAt = try row["created_at"]
        updatedAt = try row["updated_at"]
        assignee = try row["assignee"]
        resolution = try row["resolution", as: String?.self].flatMap(Resolution.init(rawValue:))
        resolvedBy = try row["resolved_by"]
        resolvedAt = try row["resolved_at"]
        note = try row["note"]
    }
}

/// One row of `reconcile.review_events`: who moved an item from where to where, and why.
public struct ReviewEvent: Sendable, Equatable {
    /// The row id.
    public var id: Int64
    /// The run that wrote it, for events written by the job.
    public var runID: Int64?
    /// A person's name, or `reconcile` for the job.
    public var actor: String
    /// The status before; nil when the item was created.
    public var fromStatus: String?
    /// The status after.
    public var toStatus: String
    /// The note left with the decision.
    public var note: String?
    /// Extra facts as JSON text (the outbox action written, a previous assignee).
    public var details: String?
    /// When it was created.
    public var createdAt: Date

    init(row: Row) throws {
        id = try row["id"]
        runID = try row["run_id"]
        actor = try row["actor"]
        fromStatus = try row["from_status"]
        toStatus = try row["to_status"]
        note = try row["note"]
        details = try row["details", as: String?.self]
        createdAt = try row["created_at"]
    }
}

/// One row of `reconcile.action_outbox`: a decision the app's fulfilment system carries out.
public struct OutboxEntry: Sendable, Equatable, Encodable {
    /// The row id.
    public var id: Int64
    /// The item decided.
    public var reviewItemID: Int64
    /// The event that recorded the decision.
    public var reviewEventID: Int64
    /// What to do.
    public var action: OutboxAction
    /// Apple's transaction id.
    public var transactionID: String?
    /// The product (Apple's, when Apple knows the transaction).
    public var productID: String?
    /// How many units.
    public var quantity: Int?
    /// The account to take the goods from (revoke, move).
    public var fromUserID: String?
    /// The account to give the goods to (grant, move).
    public var toUserID: String?
    /// Who decided.
    public var decidedBy: String
    /// The note left with the decision.
    public var note: String?
    /// When it was created.
    public var createdAt: Date
    /// When the webhook delivered it (a 2xx); nil before, or without a webhook.
    public var deliveredAt: Date?
    /// When the app carried it out; nil while pending.
    public var consumedAt: Date?
    /// Who acked it (`reconcile outbox ack --by`).
    public var consumedBy: String?

    static let columns = """
        id, review_item_id, review_event_id, action, transaction_id, product_id, quantity, from_user_id, to_user_id, \
        decided_by, note, created_at, delivered_at, consumed_at, consumed_by
        """

    /// SPEC section 13's JSON field names (`outbox list --json`, the webhook's body).
    enum CodingKeys: String, CodingKey {
        case id
        case reviewItemID = "review_item_id"
        case action
        case transactionID = "transaction_id"
        case productID = "product_id"
        case quantity
        case fromUserID = "from_user_id"
        case toUserID = "to_user_id"
        case decidedBy = "decided_by"
        case note
        case createdAt = "created_at"
        case deliveredAt = "delivered_at"
        case consumedAt = "consumed_at"
        case consumedBy = "consumed_by"
    }

    public func encode(to encoder: any Encoder) throws {
        // Every field, nulls included: the JSON's shape does not depend on what is known.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(reviewItemID, forKey: .reviewItemID)
        try container.encode(action, forKey: .action)
        try container.encode(transactionID, forKey: .transactionID)
        try container.encode(productID, forKey: .productID)
        try container.encode(quantity, forKey: .quantity)
        try container.encode(fromUserID, forKey: .fromUserID)
        try container.encode(toUserID, forKey: .toUserID)
        try container.encode(decidedBy, forKey: .decidedBy)
        try container.encode(note, forKey: .note)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(deliveredAt, forKey: .deliveredAt)
        try container.encode(consumedAt, forKey: .consumedAt)
        try container.encode(consumedBy, forKey: .consumedBy)
    }

    init(row: Row) throws {
        id = try row["id"]
        reviewItemID = try row["review_item_id"]
        reviewEventID = try row["review_event_id"]
        let rawAction: String = try row["action"]
        guard let action = OutboxAction(rawValue: rawAction) else {
            throw PostgresError(kind: .decoding, message: "outbox row \(id) has unknown action \(rawAction)")
        }
        self.action = action
        transactionID = try row["transaction_id"]
        productID = try row["product_id"]
        quantity = try row["quantity"]
        fromUserID = try row["from_user_id"]
        toUserID = try row["to_user_id"]
        decidedBy = try row["decided_by"]
        note = try row["note"]
        createdAt = try row["created_at"]
        deliveredAt = try row["delivered_at"]
        consumedAt = try row["consumed_at"]
        consumedBy = try row["consumed_by"]
    }
}

/// An item with everything a person needs to decide it.
public struct ReviewItemDetail: Sendable {
    /// The item.
    public var item: ReviewItem
    /// The evidence as JSON text: `apple_transaction`, `deliveries`, `uploads` (with `device`), `buyer`.
    public var evidence: String
    /// Its history, oldest first.
    public var events: [ReviewEvent]
    /// The action its decision enqueued, if any.
    public var outbox: OutboxEntry?
    /// What the job answered Apple about refund requests for the item's transaction, and what
    /// Apple decided (SPEC section 14), newest first.
    public var consumptionAnswers: [ConsumptionAnswerRecord] = []
}

/// What a claim, resolve or dismiss did.
public struct TransitionOutcome: Sendable {
    /// The item after the command.
    public var item: ReviewItem
    /// False when the command repeated one already carried out (nothing was written).
    public var changed: Bool
    /// The outbox row of the item's decision, if it has one.
    public var outbox: OutboxEntry?
    /// One line for a person: what happened.
    public var message: String
}

/// One row of `reconcile.runs`, for the runs list.
public struct RunSummary: Sendable {
    /// The row id.
    public var id: Int64
    /// `running`, `completed`, `completed_with_unresolved`, `failed` or `interrupted`.
    public var status: String
    /// Window start; nil from the beginning.
    public var since: Date?
    /// Window end.
    public var until: Date
    /// `production` or `sandbox`.
    public var environment: String
    /// A dry run writes no review items.
    public var dryRun: Bool
    /// When it started.
    public var startedAt: Date
    /// When it finished; nil while running.
    public var finishedAt: Date?
    /// Uploads in the window.
    public var uploads: Int
    /// Open findings the run detected.
    public var findingsTotal: Int
    /// Findings first detected by the run.
    public var findingsNew: Int
    /// Where the job wrote the run's report files.
    public var reportDirectory: String?
    /// Why it failed, if it did.
    public var error: String?

    static let columns = """
        id, status, window_since, window_until, environment, dry_run, started_at, finished_at, uploads_total, \
        findings_total, findings_new, report_dir, error
        """

    init(row: Row) throws {
        id = try row["id"]
        status = try row["status"]
        since = try row["window_since"]
        until = try row["window_until"]
        environment = try row["environment"]
        dryRun = try row["dry_run"]
        startedAt = try row["started_at"]
        finishedAt = try row["finished_at"]
        uploads = try row["uploads_total"]
        findingsTotal = try row["findings_total"]
        findingsNew = try row["findings_new"]
        reportDirectory = try row["report_dir"]
        error = try row["error"]
    }
}
