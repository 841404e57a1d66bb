import Foundation
import Reconciliation

/// Turns an item, its evidence JSON and its history into the item page's view.
enum ItemPageBuilder {
    /// Apple's fields worth a support person's eye, in reading order; the rest follow.
    static let appleFieldOrder = [
        "transaction_id", "original_transaction_id", "product_id", "product_type", "quantity", "purchase_date",
        "environment", "bundle_id", "price_milli", "currency", "storefront", "ownership_type", "app_account_token",
        "revocation_date", "revocation_reason", "web_order_line_item_id", "source",
    ]

    static func page(
        _ detail: ReviewItemDetail, session: SessionStore.Session, flash: FlashView?, nextHref: String?
    ) -> ItemPage {
        let item = detail.item
        let evidence = (try? JSONSerialization.jsonObject(with: Data(detail.evidence.utf8))) as? [String: Any] ?? [:]
        let apple = evidence["apple_transaction"] as? [String: Any] ?? [:]
        let appleKeys = appleFieldOrder.filter { apple[$0] != nil }
            + apple.keys.filter { !appleFieldOrder.contains($0) }.sorted()
        // Prices are milliunits: shown once, as money, rather than as two raw fields.
        var value: String?
        if let price = (apple["price_milli"] as? NSNumber)?.int64Value, let currency = apple["currency"] as? String {
            // Apple's price is already the total for the quantity (SPEC section 14).
            let quantity = max(1, (apple["quantity"] as? NSNumber)?.int64Value ?? 1)
            value = "\(ReportWriter.formatMilli(price)) \(currency)"
                + (quantity == 1 ? "" : " (\(quantity) × \(ReportWriter.formatMilli(price / quantity)))")
        }
        let appleRows = appleKeys.filter { !(apple[$0] is NSNull) && $0 != "price_milli" && $0 != "currency" }
            .map { key -> ItemPage.KeyValue in
            let value = apple[key]
            let shown = key.hasSuffix("_date") || key.hasSuffix("_seen") || key.hasSuffix("_at")
                ? Format.evidenceTime(value) : Format.text(value)
            return ItemPage.KeyValue(key: Format.label(key), value: shown)
        } + (value.map { [ItemPage.KeyValue(key: "Price", value: $0)] } ?? [])
        let deliveries = (evidence["deliveries"] as? [[String: Any]] ?? []).map { row in
            ItemPage.Delivery(
                id: Format.text(row["id"]), transaction: Format.text(row["transaction_id"]), user: Format.text(row["user_id"]),
                product: Format.text(row["product_id"]), quantity: Format.text(row["quantity"]),
                delivered: Format.evidenceTime(row["delivered_at"]), revokedAt: Format.evidenceTime(row["revoked_at"]),
                revoked: row["revoked_at"] is String)
        }
        let uploads = (evidence["uploads"] as? [[String: Any]] ?? []).map { row in
            var verification = Format.text(row["verification"])
            if let status = row["apple_status"], !(status is NSNull) { verification += " (Apple \(Format.text(status)))" }
            if let error = row["error"] as? String, !error.isEmpty { verification += ": \(error)" }
            return ItemPage.Upload(
                id: Format.text(row["id"]), user: Format.text(row["user_id"]), kind: Format.text(row["kind"]),
                uploaded: Format.evidenceTime(row["uploaded_at"]), device: Format.device(row["device"]),
                verification: verification)
        }
        let buyer = (evidence["buyer"] as? [String: Any]).flatMap { buyer -> ItemPage.Buyer? in
            guard let user = buyer["user_id"] as? String else {
                return ItemPage.Buyer(user: "unknown", basis: "several accounts uploaded it and nothing binds it")
            }
            return ItemPage.Buyer(user: user, basis: "by \(Format.text(buyer["basis"]).replacingOccurrences(of: "_", with: " "))")
        }
        let canAct = item.status == .open || item.status == .inReview
        let claimedByOther = item.status == .inReview && item.assignee != session.name
        var decision: String?
        if item.status == .resolved {
            decision = "Resolved as \(item.resolution?.rawValue ?? "?") by \(item.resolvedBy ?? "?") on \(Format.minute(item.resolvedAt))"
        } else if item.status == .dismissed {
            decision = "Dismissed by \(item.resolvedBy ?? "?") on \(Format.minute(item.resolvedAt))"
        }
        let closedMessage = switch item.status {
        case .autoResolved: "A later run no longer detects this condition, so it closed itself. Nothing to decide."
        default: "A decision is final."
        }
        let suggested: Resolution? = switch item.suggestedAction {
        case "grant": .granted
        case "revoke": .revoked
        case "move": .moved
        default: .noAction
        }
        let labels: [Resolution: String] = [
            .granted: "Granted — give the goods to the buyer", .revoked: "Revoked — take the goods back",
            .moved: "Moved — move the goods to the buyer", .noAction: "No action — nothing for the app to do",
        ]
        return ItemPage(
            session: SessionView(session), flash: flash, csrf: session.csrfToken, nextHref: nextHref,
            item: .init(
                id: item.id, kindLabel: Format.label(item.kind),
                userLabel: ["missed_delivery", "wrong_account"].contains(item.kind) ? "Buyer" : "Account", severity: item.severity, status: item.status.rawValue,
                statusLabel: Format.label(item.status.rawValue), explanation: Format.explanation(item.kind),
                suggestedAction: item.suggestedAction, transaction: item.transactionID ?? "—",
                originalTransaction: item.originalTransactionID ?? "—", user: item.userID ?? "—",
                product: item.productID ?? "—", detected: Format.minute(item.createdAt), firstSeenRun: item.firstSeenRun,
                lastSeenRun: item.lastSeenRun, assignee: item.assignee ?? "nobody yet", decision: decision, note: item.note,
                value: value),
            canAct: canAct, claimable: item.status == .open, claimedByMe: item.status == .inReview && !claimedByOther,
            claimedByOther: claimedByOther, closedMessage: closedMessage,
            resolutionOptions: Resolution.allCases.map {
                OptionView(value: $0.rawValue, label: labels[$0] ?? $0.rawValue, selected: $0 == suggested)
            },
            apple: appleRows, hasApple: !appleRows.isEmpty, buyer: buyer, deliveries: deliveries,
            hasDeliveries: !deliveries.isEmpty, uploads: uploads, hasUploads: !uploads.isEmpty,
            events: detail.events.map { event in
                let change: String
                switch (event.fromStatus, event.toStatus) {
                case (nil, "open"): change = "detected the discrepancy"
                case ("in_review", "in_review"): change = "took the item over"
                case (_, "in_review"): change = "claimed the item"
                case (_, "resolved"):
                    let resolution = (event.details.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
                        as? [String: Any])?["resolution"] as? String
                    change = "resolved it as \(resolution ?? "?")"
                case (_, "dismissed"): change = "dismissed it"
                case (_, "auto_resolved"): change = "auto-resolved it"
                case (let from, let to): change = "moved it from \(from ?? "—") to \(to)"
                }
                // The job's "detected" note repeats what the change already says.
                let note = event.fromStatus == nil && event.actor == "reconcile" ? nil : event.note
                return ItemPage.Event(when: Format.minute(event.createdAt), actor: event.actor, change: change, note: note)
            },
            outbox: detail.outbox.map { entry in
                ItemPage.Outbox(
                    id: entry.id, description: ReviewService.describe(entry), decidedBy: entry.decidedBy,
                    state: entry.consumedAt.map { "carried out \(Format.minute($0))" } ?? "waiting for the app")
            })
    }
}
