import Foundation
import Reconciliation

/// The shapes `review list --format json` and `review show --json` print, with the column names
/// of `reconcile.review_items` as keys.
enum ReviewOutput {
    static func json(_ item: ReviewItem) -> [String: Any] {
        func value(_ text: String?) -> Any { text ?? NSNull() }
        return [
            "id": item.id, "fingerprint": item.fingerprint, "kind": item.kind.rawValue, "severity": item.severity.rawValue,
            "status": item.status.rawValue, "store": item.store.rawValue, "transaction_id": value(item.transactionID),
            "original_transaction_id": value(item.originalTransactionID), "user_id": value(item.userID),
            "product_id": value(item.productID), "suggested_action": item.suggestedAction.rawValue,
            "first_seen_run": item.firstSeenRun, "last_seen_run": item.lastSeenRun,
            "created_at": TimeExpression.format(item.createdAt), "updated_at": TimeExpression.format(item.updatedAt),
            "assignee": value(item.assignee), "resolution": value(item.resolution?.rawValue),
            "resolved_by": value(item.resolvedBy), "resolved_at": value(item.resolvedAt.map(TimeExpression.format)),
            "note": value(item.note), "amount_milli": item.amountMilli ?? NSNull(), "currency": value(item.currency),
            "pending_resolution": value(item.pending?.resolution.rawValue), "pending_by": value(item.pending?.by),
            "pending_at": value(item.pending.map { TimeExpression.format($0.at) }), "pending_note": value(item.pending?.note),
            "approved_by": value(item.approvedBy), "approved_at": value(item.approvedAt.map(TimeExpression.format)),
        ]
    }

    static func json(_ event: ReviewEvent) -> [String: Any] {
        [
            "id": event.id, "actor": event.actor, "from_status": event.fromStatus?.rawValue ?? NSNull(),
            "to_status": event.toStatus.rawValue, "note": event.note ?? NSNull(), "run_id": event.runID ?? NSNull(),
            "details": event.details.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } ?? NSNull(),
            "created_at": TimeExpression.format(event.createdAt),
        ]
    }

    static func json(_ entry: OutboxEntry) -> [String: Any] {
        [
            "id": entry.id, "action": entry.action.rawValue, "store": entry.store.rawValue,
            "transaction_id": entry.transactionID ?? NSNull(),
            "product_id": entry.productID ?? NSNull(), "quantity": entry.quantity ?? NSNull(),
            "from_user_id": entry.fromUserID ?? NSNull(), "to_user_id": entry.toUserID ?? NSNull(),
            "decided_by": entry.decidedBy, "note": entry.note ?? NSNull(), "review_event_id": entry.reviewEventID,
            "created_at": TimeExpression.format(entry.createdAt),
            "consumed_at": entry.consumedAt.map(TimeExpression.format) ?? NSNull(),
        ]
    }

    /// A row of `reconcile.consumption_answers`, with its table's column names.
    static func json(_ answer: ConsumptionAnswerRecord) -> [String: Any] {
        [
            "id": answer.id, "transaction_id": answer.transactionID, "user_id": answer.userID ?? NSNull(),
            "requested_at": TimeExpression.format(answer.requestedAt),
            "created_at": TimeExpression.format(answer.answeredAt), "status": answer.status.rawValue,
            "body": answer.body.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } ?? NSNull(),
            "apple_error": answer.appleError ?? NSNull(), "outcome": answer.outcome?.rawValue ?? NSNull(),
            "decided_at": answer.decidedAt.map(TimeExpression.format) ?? NSNull(),
        ]
    }

    static func print(json object: Any) throws {
        let data = try JSONSerialization.data(
            withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        Swift.print(String(decoding: data, as: UTF8.self))
    }

    /// A fixed-width table; cells are made terminal-safe and cut to their column's width.
    static func table(header: [String], rows: [[String]], widths: [Int]) -> String {
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in
                let safe = terminalSafe(cell)
                let cut = safe.count > width ? String(safe.prefix(width - 1)) + "…" : safe
                return cut.padding(toLength: width, withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }
}
