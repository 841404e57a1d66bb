import Foundation
import Reconciliation

/// Turns an item, its evidence JSON and its history into the item page's view, in the reader's
/// language and time zone.
enum ItemPageBuilder {
    /// Apple's fields worth a support person's eye, in reading order; the rest follow.
    static let appleFieldOrder = [
        "transaction_id", "original_transaction_id", "product_id", "product_type", "quantity", "purchase_date",
        "environment", "bundle_id", "price_milli", "currency", "storefront", "ownership_type", "app_account_token",
        "revocation_date", "revocation_reason", "revocation_type", "revocation_percentage", "app_transaction_id",
        "web_order_line_item_id", "source",
    ]

    /// Apple's fields whose values are a closed set the catalog names (`apple_value.<field>.<value>`).
    static let appleValueKeys: Set<String> = [
        "product_type", "ownership_type", "source", "revocation_reason", "revocation_type",
    ]

    static func page(
        _ detail: ReviewItemDetail, session: SessionStore.Session, nextHref: String?, reader: Reader
    ) -> ItemPage {
        let t = reader.catalog
        // A value of an event's details (`decided_by`), and a resolution named there in the reader's words.
        func eventValue(_ event: ReviewEvent, _ key: String) -> String? {
            (event.details.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Any])?[key]
                as? String
        }
        func resolution(_ event: ReviewEvent, _ key: String) -> String {
            let raw = eventValue(event, key)
            return raw.flatMap(Resolution.init(rawValue:)).map(t.resolution) ?? raw ?? "?"
        }
        let item = detail.item
        // The evidence the diff wrote (`Evidence`); Apple's transaction also as all its fields, in
        // order, so that a column the job adds shows without a change here. A row written by hand
        // in another shape shows as no evidence.
        let evidence = try? Evidence(json: detail.evidence)
        let apple: [String: JSONValue] =
            if case .object(let fields)? = (try? JSONDecoder().decode([String: JSONValue].self, from: Data(detail.evidence.utf8)))?["apple_transaction"] {
                fields
            } else {
                [:]
            }
        let appleKeys = appleFieldOrder.filter { apple[$0] != nil }
            + apple.keys.filter { !appleFieldOrder.contains($0) }.sorted()
        // Prices are milliunits: shown once, as money, rather than as two raw fields.
        var value: String?
        if let transaction = evidence?.appleTransaction, let price = transaction.priceMilli,
            let currency = transaction.currency
        {
            // Apple's price is already the total for the quantity (SPEC section 14).
            let quantity = Int64(max(1, transaction.quantity ?? 1))
            let total = reader.money(milli: price, currency: currency)
            value = quantity == 1
                ? total
                : t.text("item.value_each", [
                    "total": total, "quantity": String(quantity),
                    "each": reader.money(milli: price / quantity, currency: currency),
                ])
        }
        // The store is the item's own line; a purchase that is paid (every Apple one) says nothing by
        // its `pending` flag.
        let appleRows = appleKeys.filter {
            apple[$0] != .null && $0 != "price_milli" && $0 != "currency" && $0 != "store"
                && !($0 == "pending" && apple[$0] == .bool(false))
        }
            .map { key -> ItemPage.KeyValue in
                let text = apple[key]?.text
                let shown: String
                if key.hasSuffix("_date") || key.hasSuffix("_seen") || key.hasSuffix("_at") {
                    shown = Format.evidenceTime(text, reader)
                } else if key == "revocation_percentage", case .number(let milli)? = apple[key] {
                    // Apple's milliunits of the whole quantity: 33333 is 33.333%.
                    shown = (milli / 1000).formatted(.number.precision(.fractionLength(0...3))) + "%"
                } else if key == "environment", let environment = evidence?.appleTransaction?.environment {
                    shown = t.environment(environment)
                } else if Self.appleValueKeys.contains(key), let text {
                    // Apple's enumerations in words; a value the catalog does not know shows as it came.
                    shown = t.label("apple_value.\(key)", text)
                } else {
                    shown = Format.text(text)
                }
                return ItemPage.KeyValue(key: t.label("apple_field", key), value: shown)
            } + (value.map { [ItemPage.KeyValue(key: t["apple.price"], value: $0)] } ?? [])
        let deliveries = (evidence?.deliveries ?? []).map { row in
            ItemPage.Delivery(
                id: Format.text(row.id.map(String.init)), transaction: Format.text(row.transactionID),
                user: Format.text(row.userID), product: Format.text(row.productID),
                quantity: Format.text(row.quantity.map(String.init)),
                delivered: Format.evidenceTime(row.deliveredAt, reader),
                revokedAt: Format.evidenceTime(row.revokedAt, reader), revoked: row.revokedAt != nil)
        }
        let uploads = (evidence?.uploads ?? []).map { row in
            var verification = row.verification.map(t.verification) ?? Format.text(nil)
            if let status = row.appleStatus {
                verification += " (" + t.text("uploads.apple_status", ["status": String(status)]) + ")"
            }
            // Apple's or the parser's own words: data, shown as they came.
            if let error = row.error, !error.isEmpty { verification += ": \(error)" }
            return ItemPage.Upload(
                id: String(row.id), user: Format.text(row.userID),
                kind: row.kind.map(t.uploadKind) ?? Format.text(nil),
                uploaded: Format.evidenceTime(row.uploadedAt, reader), device: Format.device(row.device, t),
                verification: verification)
        }
        let buyer = evidence?.buyer.map { buyer -> ItemPage.Buyer in
            guard let user = buyer.userID else {
                return ItemPage.Buyer(user: t["apple.unknown_buyer"], basis: t["apple.unknown_basis"])
            }
            return ItemPage.Buyer(user: user, basis: buyer.basis.map(t.basis) ?? "—")
        }
        let canAct = item.status == .open || item.status == .inReview
        let claimedByOther = item.status == .inReview && item.assignee != session.name
        var decision: String?
        // A policy's decision names its rule (its actor is policy:<rule>, SPEC section 17).
        let rule: String? = item.resolvedBy.flatMap {
            if case .policy(let rule) = ReviewActor(recorded: $0) { rule } else { nil }
        }
        let decider: [String: String] = rule.map { ["rule": $0] } ?? ["name": item.resolvedBy ?? "?"]
        if item.status == .resolved {
            decision = t.text(rule == nil ? "item.resolved_as" : "item.resolved_by_policy", decider.merging([
                "resolution": item.resolution.map(t.resolution) ?? "?", "date": reader.minute(item.resolvedAt),
            ]) { $1 })
        } else if item.status == .dismissed {
            decision = t.text(
                rule == nil ? "item.dismissed_by" : "item.dismissed_by_policy",
                decider.merging(["date": reader.minute(item.resolvedAt)]) { $1 })
        }
        let closedMessage = item.status == .autoResolved ? t["item.closed_auto"] : t["item.closed_final"]
        let awaiting = item.pending.map { pending in
            let seen = SeenDecision(pending)
            return ItemPage.Awaiting(
                text: t.text("item.awaiting", [
                    "resolution": t.resolution(pending.resolution), "name": pending.by, "date": reader.minute(pending.at),
                ]),
                note: pending.note, canApprove: pending.by.caseInsensitiveCompare(session.name) != .orderedSame,
                resolution: seen.resolution.rawValue, at: String(seen.at))
        }
        let approvedText = item.approvedBy.map {
            t.text("item.approved_by", ["name": $0, "date": reader.minute(item.approvedAt)])
        }
        let suggested: Resolution? = switch item.suggestedAction {
        case .grant: .granted
        case .revoke: .revoked
        case .move: .moved
        default: .noAction
        }
        return ItemPage(
            csrf: session.csrfToken, nextHref: nextHref, customerHref: item.userID.map { deskHref(user: $0) },
            item: .init(
                id: item.id, kindLabel: t.kind(item.kind),
                userLabel: item.kind.accountIsTheBuyer ? t["item.buyer"] : t["item.account"],
                severity: item.severity.rawValue, severityLabel: t.severity(item.severity), status: item.status.rawValue,
                statusLabel: t.status(item.status), explanation: t.explanation(item.kind),
                suggestedAction: t.suggestedAction(item.suggestedAction), storeLabel: t.store(item.store),
                transactionLabel: t.transactionLabel(item.store),
                originalTransactionLabel: t[
                    item.store == .googlePlay ? "item.original_order_id" : "item.original_transaction"],
                transaction: item.transactionID ?? "—",
                originalTransaction: item.originalTransactionID ?? "—", user: item.userID ?? "—",
                product: item.productID ?? "—",
                detected: t.text("item.detected_value", [
                    "date": reader.minute(item.createdAt), "first": String(item.firstSeenRun),
                    "last": String(item.lastSeenRun),
                ]),
                assignee: item.assignee ?? t["item.nobody"], decision: decision, note: item.note, value: value),
            canAct: canAct, claimable: item.status == .open, claimedByMe: item.status == .inReview && !claimedByOther,
            claimedByOther: claimedByOther, closedMessage: closedMessage, awaiting: awaiting, approvedText: approvedText,
            resolutionOptions: Resolution.allCases.filter(item.kind.allowedResolutions.contains).map {
                OptionView(value: $0.rawValue, label: t["resolution_option.\($0.rawValue)"], selected: $0 == suggested)
            },
            // What each action would do as the page shows the item, sent back with the decision:
            // the decision is refused if the action drafted at that moment is another.
            proposedActions: Resolution.allCases.compactMap { resolution in
                detail.proposedActions[resolution].map { draft in
                    ItemPage.ProposedAction(
                        resolution: resolution.rawValue,
                        text: t.text("item.would_do", [
                            "resolution": t.resolution(resolution), "action": describe(draft, t),
                        ]),
                        shown: String(decoding: (try? JSONEncoder().encode(draft)) ?? Data(), as: UTF8.self))
                }
            },
            apple: appleRows, hasApple: !appleRows.isEmpty,
            storeHeading: t[item.store == .googlePlay ? "apple.heading_google_play" : "apple.heading"],
            storeNone: t[item.store == .googlePlay ? "apple.none_google_play" : "apple.none"],
            buyer: buyer, deliveries: deliveries,
            hasDeliveries: !deliveries.isEmpty, uploads: uploads, hasUploads: !uploads.isEmpty,
            events: detail.events.map { event in
                let change: String
                switch (event.fromStatus, event.toStatus) {
                case (nil, .open): change = t["event.detected"]
                case (.inReview, .inReview): change = t["event.took_over"]
                case (_, .inReview): change = t["event.claimed"]
                case (.awaitingApproval, .resolved):
                    change = t.text("event.approved", [
                        "resolution": resolution(event, "resolution"), "name": eventValue(event, "decided_by") ?? "?",
                    ])
                case (_, .resolved):
                    change = t.text("event.resolved", ["resolution": resolution(event, "resolution")])
                case (_, .awaitingApproval):
                    change = t.text("event.awaiting_approval", ["resolution": resolution(event, "resolution")])
                case (.awaitingApproval, .open):
                    change = t.text("event.rejected", ["resolution": resolution(event, "rejected_resolution")])
                case (_, .dismissed): change = t["event.dismissed"]
                case (_, .autoResolved): change = t["event.auto_resolved"]
                case (let from, let to):
                    change = t.text("event.moved", [
                        "from": from.map { t.label("status", $0.rawValue) } ?? "—", "to": t.label("status", to.rawValue),
                    ])
                }
                // The job's "detected" note repeats what the change already says.
                let note = event.fromStatus == nil && event.by == .job ? nil : event.note
                return ItemPage.Event(when: reader.minute(event.createdAt), actor: event.actor, change: change, note: note)
            },
            outbox: detail.outbox.map { entry in
                let state = entry.consumedAt.map { t.text("item.outbox_done", ["date": reader.minute($0)]) }
                    ?? t["item.outbox_waiting"]
                return ItemPage.Outbox(
                    description: describe(entry, t),
                    line: t.text("item.outbox_line", ["id": String(entry.id), "state": state]))
            },
            refundRequests: RefundRequestRow.rows(detail.consumptionAnswers, reader: reader),
            hasRefundRequests: !detail.consumptionAnswers.isEmpty)
    }

    /// What the app is asked to do, in the reader's words (`Grant coins_600 ×1 to player-42`).
    static func describe(_ entry: OutboxEntry, _ t: Catalog) -> String {
        describe(
            ActionDraft(
                action: entry.action, productID: entry.productID, quantity: entry.quantity,
                fromUserID: entry.fromUserID, toUserID: entry.toUserID), t)
    }

    /// What a decision would ask the app to do, in the reader's words.
    static func describe(_ draft: ActionDraft, _ t: Catalog) -> String {
        t.text("outbox.\(draft.action.rawValue)", [
            "product": draft.productID ?? "?", "quantity": String(draft.quantity ?? 1),
            "from": draft.fromUserID ?? "?", "to": draft.toUserID ?? "?",
        ])
    }
}
