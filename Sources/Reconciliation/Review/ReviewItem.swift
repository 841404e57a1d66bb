import Foundation
import Postgres

/// Where a review item stands (SPEC section 6). Only the job moves items to and from `auto_resolved`.
public enum ReviewStatus: String, Sendable, CaseIterable, Codable, PostgresNonNullDecodable {
    case open
    case inReview = "in_review"
    /// A person (or a policy) decided, above `RECONCILE_APPROVAL_ABOVE`: the decision waits for a
    /// second person (SPEC section 17); nothing reached the outbox yet.
    case awaitingApproval = "awaiting_approval"
    case resolved
    case dismissed
    case autoResolved = "auto_resolved"

    /// A person decided; nothing may change it any more.
    public var isDecided: Bool { self == .resolved || self == .dismissed }

    /// Nobody's decision has taken effect and the job still judges it: open, claimed, or a
    /// decision waiting for approval (the diff refreshes, reports and auto-resolves these).
    public var isUndecided: Bool { self == .open || self == .inReview || self == .awaitingApproval }

    /// The undecided statuses (``isUndecided``), as the SQL files spell them in
    /// `status IN ('open', 'in_review', 'awaiting_approval')` (literal, so that the planner matches
    /// the partial indexes written the same way; `SQLFileTests` holds every such list to this).
    public static var undecided: [ReviewStatus] { allCases.filter(\.isUndecided) }

    /// The statuses a person can still take an item from: open, or claimed by someone.
    public static let takeable: [ReviewStatus] = [.open, .inReview]
}

/// A person's decision on a review item.
public enum Resolution: String, Sendable, CaseIterable, Codable, PostgresNonNullDecodable {
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

/// One row of `reconcile.review_items`.
public struct ReviewItem: Sendable, Equatable {
    /// The row id.
    public var id: Int64
    /// Kind plus the identity of the discrepancy; one item per condition ever.
    public var fingerprint: String
    /// The finding kind.
    public var kind: FindingKind
    /// How urgent it is.
    public var severity: Severity
    /// Where the item stands.
    public var status: ReviewStatus
    /// Which store the finding is about (SPEC section 18).
    public var store: Store
    /// The store's transaction id: Apple's, or Google Play's order id.
    public var transactionID: String?
    /// The store's original transaction id (Google Play: the order id without its `..N` suffix).
    public var originalTransactionID: String?
    /// The account the finding is about (for a grant or a move: the buyer; otherwise the delivery's account).
    public var userID: String?
    /// The product (Apple's, when Apple knows the transaction).
    public var productID: String?
    /// The upload a per-upload finding (`foreign_bundle`) is about.
    public var uploadID: Int64?
    /// What support staff should probably do.
    public var suggestedAction: SuggestedAction
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
    /// What the item is worth (milliunits of ``currency``), nil when unknown.
    public var amountMilli: Int64?
    /// The currency of ``amountMilli``.
    public var currency: String?
    /// The decision waiting for a second person, while ``status`` is `awaiting_approval`.
    public var pending: PendingDecision?
    /// Who approved the decision the item was resolved with, when it needed approval.
    public var approvedBy: String?
    /// When it was approved.
    public var approvedAt: Date?

    /// The item's value, when known.
    public var value: Money? {
        guard let amountMilli, let currency else { return nil }
        return Money(milli: amountMilli, currency: currency)
    }

    init(row: Row) throws {
        id = try row["id"]
        fingerprint = try row["fingerprint"]
        kind = try row["kind"]
        severity = Severity(rawValue: try row["severity"])
        status = try row["status"]
        store = try row["store"]
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
        resolution = try row["resolution"]
        resolvedBy = try row["resolved_by"]
        resolvedAt = try row["resolved_at"]
        note = try row["note"]
        amountMilli = try row["amount_milli"]
        currency = try row["currency"]
        if let resolution: Resolution = try row["pending_resolution"] {
            pending = PendingDecision(
                resolution: resolution, by: try row["pending_by"], at: try row["pending_at"], note: try row["pending_note"])
        }
        approvedBy = try row["approved_by"]
        approvedAt = try row["approved_at"]
    }
}

/// A decision above `RECONCILE_APPROVAL_ABOVE` that waits for a second person: what was decided,
/// by whom, when and why. Approving it applies exactly this.
public struct PendingDecision: Sendable, Equatable {
    public var resolution: Resolution
    /// Who decided: a person, or `policy:<rule>`.
    public var by: String
    public var at: Date
    public var note: String?

    public init(resolution: Resolution, by: String, at: Date, note: String?) {
        self.resolution = resolution
        self.by = by
        self.at = at
        self.note = note
    }
}

/// The pending decision a second person was shown when they chose to approve or reject it (the
/// item page's forms carry it): approving or rejecting is refused when the decision waiting now is
/// another, so nobody applies a decision they never saw.
public struct SeenDecision: Sendable, Equatable {
    public var resolution: Resolution
    /// When it was decided (`pending_at`), in whole microseconds since 1970: PostgreSQL's
    /// precision, and an integer, so it goes through a form unchanged.
    public var at: Int64

    public init(resolution: Resolution, at: Int64) {
        self.resolution = resolution
        self.at = at
    }

    /// What a page showing `pending` shows of it.
    public init(_ pending: PendingDecision) {
        self.init(resolution: pending.resolution, at: Self.microseconds(pending.at))
    }

    /// Whether `pending` is the decision that was seen: the same resolution, decided at the same moment.
    public func matches(_ pending: PendingDecision) -> Bool {
        self == SeenDecision(pending)
    }

    private static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }
}

/// One row of `reconcile.review_events`: who moved an item from where to where, and why.
public struct ReviewEvent: Sendable, Equatable {
    /// The row id.
    public var id: Int64
    /// The run that wrote it, for events written by the job.
    public var runID: Int64?
    /// The recorded name: a person's, or the product's own (``by``).
    public var actor: String
    /// Who it was.
    public var by: ReviewActor { ReviewActor(recorded: actor) }
    /// The status before; nil when the item was created.
    public var fromStatus: ReviewStatus?
    /// The status after.
    public var toStatus: ReviewStatus
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
    /// What each resolution the item's kind allows would make the app do, as the item stands
    /// (the page shows it beside its decision and sends it back with it); a resolution the
    /// evidence cannot turn into an action is absent.
    public var proposedActions: [Resolution: ActionDraft] = [:]
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
