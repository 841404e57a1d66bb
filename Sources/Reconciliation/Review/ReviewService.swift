import Foundation
import Postgres

/// The review queue for support staff (SPEC sections 6–8): the one place where items are listed,
/// shown, claimed, resolved and dismissed, used by `reconcile review` and by `reconcile serve` alike.
///
/// Every transition locks the item (`SELECT … FOR UPDATE`), checks its state, and writes the new
/// state, a `review_events` row and, for a decision the app must act on, one `action_outbox` row,
/// all in one transaction. Repeating a command that already took effect changes nothing and
/// succeeds, so a retried click or a re-run script never enqueues an action twice.
public struct ReviewService {
    /// Longest note kept; a note is for a sentence or two, not a document.
    public static let maximumNoteLength = 2000
    /// Longest actor name.
    public static let maximumNameLength = 200
    /// Largest page.
    public static let maximumPageSize = 500
    /// Highest page number: far beyond any queue (500 million items at the largest page size),
    /// and low enough that `(page - 1) * limit` can never overflow.
    public static let maximumPage = 1_000_000

    private let connection: Connection

    /// A service on one connection; use it from one task at a time, like the connection.
    public init(connection: Connection) {
        self.connection = connection
    }

    // MARK: Reading

    /// One page of the items matching `filter`, most severe first, then oldest first.
    /// A page beyond ``maximumPage`` is `ReviewError.invalidInput`.
    public func list(_ filter: ReviewFilter, page: Int = 1, limit: Int = 50) throws -> ReviewPage {
        let limit = min(max(limit, 1), Self.maximumPageSize)
        guard page <= Self.maximumPage else {
            throw ReviewError.invalidInput("a page number is at most \(Self.maximumPage)")
        }
        let page = max(page, 1)
        let (clause, parameters) = filter.sql()
        let total = try connection.query(
            "SELECT count(*) FROM reconcile.review_items WHERE \(clause)", parameters)[0].decode(Int.self, at: 0)
        let rows = try connection.query(
            """
            SELECT \(ReviewItem.columns) FROM reconcile.review_items WHERE \(clause)
             ORDER BY \(Self.severityRank), created_at, id
             LIMIT \(limit) OFFSET \((page - 1) * limit)
            """, parameters)
        let (kindClause, kindParameters) = filter.sql(excludingKinds: true)
        var counts: [String: Int] = [:]
        for row in try connection.query(
            "SELECT kind, count(*) AS n FROM reconcile.review_items WHERE \(kindClause) GROUP BY kind", kindParameters)
        {
            counts[try row["kind"]] = try row["n"]
        }
        return ReviewPage(
            items: try rows.map(ReviewItem.init(row:)), total: total, page: page, limit: limit,
            countsByKind: FindingKind.allCases.map { ($0, counts[$0.rawValue] ?? 0) })
    }

    /// An item with its evidence, history and outbox row.
    public func detail(id: Int64) throws -> ReviewItemDetail {
        guard let row = try connection.queryFirst(
            "SELECT \(ReviewItem.columns), evidence::text AS evidence_text FROM reconcile.review_items WHERE id = $1", id)
        else { throw ReviewError.notFound(id: id) }
        let events = try connection.query(
            """
            SELECT id, run_id, actor, from_status, to_status, note, details::text AS details, created_at
              FROM reconcile.review_events WHERE review_item_id = $1 ORDER BY id
            """, [id]
        ).map(ReviewEvent.init(row:))
        let item = try ReviewItem(row: row)
        return ReviewItemDetail(
            item: item, evidence: try row["evidence_text"], events: events, outbox: try outbox(itemID: id),
            consumptionAnswers: try item.transactionID.map {
                try ConsumptionAnswerRecord.find(transactionIDs: [$0], on: connection)
            } ?? [])
    }

    /// The item at the top of the working queue (open or in review, most severe, oldest) other
    /// than `id`: where a person goes next after deciding one.
    public func nextInQueue(after id: Int64) throws -> Int64? {
        try connection.queryFirst(
            """
            SELECT id FROM reconcile.review_items WHERE status IN ('open', 'in_review') AND id <> $1
             ORDER BY \(Self.severityRank), created_at, id LIMIT 1
            """, id
        )?.decode(Int64.self, at: 0)
    }

    /// Writes the items matching `filter` as CSV, header first, streaming so any size fits.
    /// Fields go through `ReportWriter.csvField`, which defuses spreadsheet formulas.
    public func exportCSV(_ filter: ReviewFilter, write: (String) throws -> Void) throws {
        let header = [
            "id", "status", "kind", "severity", "transaction_id", "original_transaction_id", "user_id", "product_id",
            "suggested_action", "assignee", "resolution", "resolved_by", "resolved_at", "note", "created_at",
            "updated_at", "first_seen_run", "last_seen_run",
        ]
        try write(header.joined(separator: ",") + "\r\n")
        let (clause, parameters) = filter.sql()
        // A cursor read a batch at a time: each FETCH is a statement of its own, so a page's
        // `statement_timeout` bounds one batch and never cuts a long download short.
        try connection.transaction {
            // The whole result is read: plan for all of it, as for the plain query, not for the
            // first tenth a cursor is planned for by default.
            try connection.execute("SET LOCAL cursor_tuple_fraction = 1.0")
            try connection.execute(
                """
                DECLARE review_export NO SCROLL CURSOR FOR
                SELECT \(ReviewItem.columns) FROM reconcile.review_items WHERE \(clause)
                 ORDER BY \(Self.severityRank), created_at, id
                """, parameters)
            while true {
                let rows = try connection.query("FETCH \(Self.exportBatch) FROM review_export")
                for row in rows { try write(Self.csvLine(try ReviewItem(row: row))) }
                if rows.count < Self.exportBatch { break }
            }
        }
    }

    /// Rows fetched per statement by `exportCSV`.
    static let exportBatch = 1000

    private static func csvLine(_ item: ReviewItem) -> String {
        let fields: [String] = [
            String(item.id), item.status.rawValue, item.kind, item.severity.rawValue, item.transactionID ?? "",
            item.originalTransactionID ?? "", item.userID ?? "", item.productID ?? "", item.suggestedAction.rawValue,
            item.assignee ?? "", item.resolution?.rawValue ?? "", item.resolvedBy ?? "",
            item.resolvedAt.map(TimeExpression.format) ?? "", item.note ?? "", TimeExpression.format(item.createdAt),
            TimeExpression.format(item.updatedAt), String(item.firstSeenRun), String(item.lastSeenRun),
        ]
        return fields.map(ReportWriter.csvField).joined(separator: ",") + "\r\n"
    }

    /// The latest nightly and ad-hoc runs, newest first; the desk's lookups, recorded as runs of
    /// kind `lookup` (migration 0008), are not among them.
    public func runs(limit: Int = 50) throws -> [RunSummary] {
        try connection.query(
            """
            SELECT \(RunSummary.columns) FROM reconcile.runs WHERE kind = 'run'
             ORDER BY id DESC LIMIT \(min(max(limit, 1), 1000))
            """
        ).map(RunSummary.init(row:))
    }

    /// One run.
    public func run(id: Int64) throws -> RunSummary? {
        try connection.queryFirst("SELECT \(RunSummary.columns) FROM reconcile.runs WHERE id = $1", id)
            .map(RunSummary.init(row:))
    }

    // MARK: Transitions

    /// Claims an item for `person`: `open` → `in_review`. Claiming one's own claim again changes
    /// nothing; taking over someone else's claim needs `force` and is recorded as an event.
    public func claim(id: Int64, by person: String, force: Bool = false) throws -> TransitionOutcome {
        let person = try Self.validatedName(person)
        return try connection.transaction {
            let item = try lockedItem(id)
            switch item.status {
            case .open:
                _ = try recordEvent(item, by: person, to: .inReview, note: nil, details: ["assignee": person])
                let updated = try update(
                    "UPDATE reconcile.review_items SET status = 'in_review', assignee = $2, updated_at = now() WHERE id = $1",
                    id, person)
                return TransitionOutcome(item: updated, changed: true, outbox: nil, message: "claimed item \(id) for \(person)")
            case .inReview where item.assignee == person:
                return TransitionOutcome(
                    item: item, changed: false, outbox: nil, message: "item \(id) is already claimed by \(person)")
            case .inReview:
                guard force else {
                    throw ReviewError.claimedBySomeoneElse(id: id, assignee: item.assignee ?? "someone")
                }
                _ = try recordEvent(
                    item, by: person, to: .inReview, note: "taken over from \(item.assignee ?? "nobody")",
                    details: ["assignee": person, "previous_assignee": item.assignee ?? ""])
                let updated = try update(
                    "UPDATE reconcile.review_items SET assignee = $2, updated_at = now() WHERE id = $1", id, person)
                return TransitionOutcome(
                    item: updated, changed: true, outbox: nil,
                    message: "took item \(id) over from \(item.assignee ?? "nobody") for \(person)")
            case .resolved, .dismissed:
                throw Self.decided(item)
            case .autoResolved:
                throw ReviewError.autoResolved(id: id)
            }
        }
    }

    /// Resolves an item (`open` or `in_review` → `resolved`) and, for `granted`, `revoked` and
    /// `moved`, enqueues the one action the app must carry out. Repeating the same resolution by
    /// the same person is a no-op success; any other decision on a decided item is refused.
    public func resolve(id: Int64, resolution: Resolution, by person: String, note: String?) throws -> TransitionOutcome {
        let person = try Self.validatedName(person)
        let note = try Self.note(note, required: false)
        return try connection.transaction {
            let item = try lockedItem(id)
            switch item.status {
            case .resolved where item.resolution == resolution && item.resolvedBy == person:
                return TransitionOutcome(
                    item: item, changed: false, outbox: try outbox(itemID: id),
                    message: "item \(id) is already resolved as \(resolution.rawValue) by \(person); nothing to do")
            case .resolved, .dismissed:
                throw Self.decided(item)
            case .autoResolved:
                throw ReviewError.autoResolved(id: id)
            case .open, .inReview:
                break
            }
            let draft = try actionDraft(for: item, resolution: resolution)
            var details: [String: String] = ["resolution": resolution.rawValue]
            if let draft {
                details["action"] = draft.action.rawValue
                details["from_user_id"] = draft.fromUserID
                details["to_user_id"] = draft.toUserID
            }
            let event = try recordEvent(item, by: person, to: .resolved, note: note, details: details)
            let updated = try update(
                """
                UPDATE reconcile.review_items
                   SET status = 'resolved', resolution = $2, resolved_by = $3, resolved_at = now(), note = $4,
                       assignee = coalesce(assignee, $3), updated_at = now()
                 WHERE id = $1
                """, id, resolution.rawValue, person, note)
            var entry: OutboxEntry?
            if let draft {
                // The UNIQUE (review_item_id) constraint backs the status check above: one decision per item.
                entry = try connection.queryFirst(
                    """
                    INSERT INTO reconcile.action_outbox
                        (review_item_id, review_event_id, action, transaction_id, product_id, quantity, from_user_id,
                         to_user_id, decided_by, note)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                    RETURNING \(OutboxEntry.columns)
                    """, id, event, draft.action.rawValue, item.transactionID, draft.productID, draft.quantity,
                    draft.fromUserID, draft.toUserID, person, note
                ).map(OutboxEntry.init(row:))
            }
            var message = "resolved item \(id) as \(resolution.rawValue)"
            if let entry { message += "; queued \(Self.describe(entry)) for the app" }
            return TransitionOutcome(item: updated, changed: true, outbox: entry, message: message)
        }
    }

    /// Dismisses an item (`open` or `in_review` → `dismissed`): not a real problem, nothing to do.
    /// A note saying why is required. Repeating it by the same person is a no-op success.
    public func dismiss(id: Int64, by person: String, note: String?) throws -> TransitionOutcome {
        let person = try Self.validatedName(person)
        let note = try Self.note(note, required: true)
        return try connection.transaction {
            let item = try lockedItem(id)
            switch item.status {
            case .dismissed where item.resolvedBy == person:
                return TransitionOutcome(
                    item: item, changed: false, outbox: nil,
                    message: "item \(id) is already dismissed by \(person); nothing to do")
            case .resolved, .dismissed:
                throw Self.decided(item)
            case .autoResolved:
                throw ReviewError.autoResolved(id: id)
            case .open, .inReview:
                break
            }
            _ = try recordEvent(item, by: person, to: .dismissed, note: note, details: [:])
            let updated = try update(
                """
                UPDATE reconcile.review_items
                   SET status = 'dismissed', resolved_by = $2, resolved_at = now(), note = $3,
                       assignee = coalesce(assignee, $2), updated_at = now()
                 WHERE id = $1
                """, id, person, note)
            return TransitionOutcome(item: updated, changed: true, outbox: nil, message: "dismissed item \(id)")
        }
    }

    // MARK: Plumbing

    private static let severityRank = Severity.rankSQL(column: "severity")

    private func lockedItem(_ id: Int64) throws -> ReviewItem {
        guard let row = try connection.queryFirst(
            "SELECT \(ReviewItem.columns) FROM reconcile.review_items WHERE id = $1 FOR UPDATE", id)
        else { throw ReviewError.notFound(id: id) }
        return try ReviewItem(row: row)
    }

    private func update(_ sql: String, _ parameters: any PostgresEncodable...) throws -> ReviewItem {
        let row = try connection.query(sql + " RETURNING \(ReviewItem.columns)", parameters)[0]
        return try ReviewItem(row: row)
    }

    /// Appends the event of a transition and returns its id.
    private func recordEvent(
        _ item: ReviewItem, by person: String, to status: ReviewStatus, note: String?, details: [String: String]
    ) throws -> Int64 {
        try connection.query(
            """
            INSERT INTO reconcile.review_events (review_item_id, actor, from_status, to_status, note, details)
            VALUES ($1, $2, $3, $4, $5, $6::jsonb) RETURNING id
            """,
            [item.id, person, item.status.rawValue, status.rawValue, note,
             details.isEmpty ? nil : try PostgresJSON(encoding: details)]
        )[0].decode(Int64.self, at: 0)
    }

    private func outbox(itemID: Int64) throws -> OutboxEntry? {
        try connection.queryFirst(
            "SELECT \(OutboxEntry.columns) FROM reconcile.action_outbox WHERE review_item_id = $1", itemID
        ).map(OutboxEntry.init(row:))
    }

    /// What the app must do for a resolution, from the item and its evidence.
    struct ActionDraft {
        var action: OutboxAction
        var productID: String?
        var quantity: Int?
        var fromUserID: String?
        var toUserID: String?
    }

    /// Granted gives Apple's product to the buyer; revoked takes the delivered goods from the
    /// delivery's account; moved does both. Refused when the evidence could not say who.
    private func actionDraft(for item: ReviewItem, resolution: Resolution) throws -> ActionDraft? {
        guard let action = resolution.action else { return nil }
        // Stored by the diff when it upserted the item (reconcile.review_item_action, migration 0006).
        let row = try connection.query(
            """
            SELECT grant_to_user_id AS buyer, grant_product_id AS apple_product, grant_quantity AS apple_quantity,
                   revoke_from_user_id AS delivery_user, revoke_product_id AS delivery_product,
                   revoke_quantity AS delivery_quantity
              FROM reconcile.review_items r
             WHERE r.id = $1
            """, [item.id])[0]
        let buyer: String? = try row["buyer"]
        let deliveryUser: String? = try row["delivery_user"]
        let appleProduct: String? = try row["apple_product"]
        switch action {
        case .grant:
            guard let buyer else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution,
                    reason: "the buyer is unknown (several accounts uploaded the transaction and nothing binds it); "
                        + "grant by hand and resolve as no_action with a note")
            }
            return ActionDraft(
                action: .grant, productID: appleProduct ?? item.productID,
                quantity: try row["apple_quantity"] ?? 1, fromUserID: nil, toUserID: buyer)
        case .revoke:
            guard let deliveryUser else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution, reason: "the evidence holds no unrevoked delivery to take back")
            }
            // After a partial refund revoke_quantity holds only the refunded units (SPEC section 14;
            // the trigger of migration 0007).
            return ActionDraft(
                action: .revoke, productID: try row["delivery_product"] ?? item.productID,
                quantity: try row["delivery_quantity"], fromUserID: deliveryUser, toUserID: nil)
        case .move:
            guard let deliveryUser, let buyer else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution,
                    reason: deliveryUser == nil
                        ? "the evidence holds no unrevoked delivery to move"
                        : "the buyer is unknown, so there is no account to move the goods to")
            }
            guard deliveryUser != buyer else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution, reason: "the goods are already with the buyer \(buyer)")
            }
            return ActionDraft(
                action: .move, productID: try row["delivery_product"] ?? item.productID,
                quantity: try row["delivery_quantity"], fromUserID: deliveryUser, toUserID: buyer)
        }
    }

    private static func decided(_ item: ReviewItem) -> ReviewError {
        .alreadyDecided(
            id: item.id, status: item.status, resolution: item.resolution, by: item.resolvedBy, at: item.resolvedAt)
    }

    /// A short description of an outbox row (`grant coin42 ×1 to u1`).
    public static func describe(_ entry: OutboxEntry) -> String {
        var text = "\(entry.action.rawValue) \(entry.productID ?? "?") ×\(entry.quantity ?? 1)"
        if let from = entry.fromUserID { text += " from \(from)" }
        if let to = entry.toUserID { text += " to \(to)" }
        return text
    }

    /// The actor the job itself records (auto-resolutions); no person may take it.
    public static let jobActor = "reconcile"

    /// A trimmed, non-empty actor name, or `ReviewError.invalidInput`: at most
    /// ``maximumNameLength`` Unicode scalars (a cluster of combining marks counts for each of
    /// them), no control or format characters (bidi overrides and isolates, zero-width joiners,
    /// U+0600 prefixes: a name must read as what it is), and not the job's own name.
    public static func validatedName(_ raw: String) throws -> String {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw ReviewError.invalidInput("a name is required (who is deciding?)") }
        guard name.unicodeScalars.count <= maximumNameLength else {
            throw ReviewError.invalidInput("a name is at most \(maximumNameLength) characters")
        }
        guard !name.unicodeScalars.contains(where: {
            let category = $0.properties.generalCategory
            return category == .control || category == .format || category == .lineSeparator
                || category == .paragraphSeparator
        }) else {
            throw ReviewError.invalidInput("a name cannot hold control or invisible formatting characters")
        }
        guard name.lowercased() != jobActor else {
            throw ReviewError.invalidInput("\(jobActor) is reserved for the job itself; use your own name")
        }
        return name
    }

    static func note(_ raw: String?, required: Bool) throws -> String? {
        let note = raw?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let note, !note.isEmpty else {
            if required { throw ReviewError.invalidInput("a note is required: say why") }
            return nil
        }
        guard note.unicodeScalars.count <= maximumNoteLength else {
            throw ReviewError.invalidInput("a note is at most \(maximumNoteLength) characters")
        }
        return note
    }
}
