import Foundation
import Hummingbird
import Logging
import Mustache
import Reconciliation

/// Turns a customer's picture into the customer page's view, in the reader's language, time
/// zone and money format.
enum DeskPageBuilder {
    /// Transactions on one customer page: a customer with a thousand purchases is read a page at a
    /// time (the findings come first, so the first page holds what needs a decision).
    static let pageSize = 50

    static func page(
        _ picture: CustomerPicture, answers: [ConsumptionAnswerRecord], typed: String, page: Int = 1, csrf: String,
        reader: Reader
    ) -> DeskPage {
        let t = reader.catalog
        let kind = t.label("desk.kind", picture.query.kind.rawValue)
        var summary: String
        if let order = picture.order, order.status == .invalid, picture.query.store == .googlePlay {
            summary = t.text("desk.play_order_invalid", ["order": order.orderID])
        } else if let order = picture.order, order.status == .notAsked, picture.query.store == .googlePlay {
            summary = t.text("desk.play_order_not_asked", ["order": order.orderID])
        } else if let order = picture.order, order.status != .valid {
            summary = t.text("desk.order_invalid", ["order": order.orderID])
        } else if picture.isEmpty {
            summary = t.text("desk.nothing_found", ["kind": kind, "value": picture.query.value])
        } else {
            summary = t.text("desk.found", [
                "kind": kind, "value": picture.query.value, "count": reader.number(picture.transactions.count),
            ])
        }
        let findings = picture.findings.count
        if !picture.isEmpty {
            summary += " " + (findings == 0
                ? t["desk.summary_ok"]
                : t.text("desk.summary_findings", [
                    "count": reader.number(findings), "total": reader.number(picture.transactions.count),
                ]))
        }
        let (shownPositions, current, pages) = Self.shown(picture.transactions, page: page)
        let shown = shownPositions.map { picture.transactions[$0] }
        func href(_ page: Int) -> String {
            "/desk?" + Form.encode([("q", picture.query.value), ("kind", picture.query.kind.rawValue), ("page", String(page))])
        }
        return DeskPage(
            query: typed, notice: nil, csrf: csrf, summary: summary, value: picture.query.value,
            kind: picture.query.kind.rawValue,
            canEnqueue: findings > 0,
            transactions: shown.map { transaction in
                Self.transaction(
                    transaction, answers: answers.filter { $0.transactionID == transaction.transactionID },
                    reader: reader)
            },
            pageText: pages > 1 ? t.text("queue.page", ["page": String(current), "pages": String(pages)]) : nil,
            prevHref: current > 1 ? href(current - 1) : nil, nextHref: current < pages ? href(current + 1) : nil,
            asked: t.text("desk.asked", [
                "sources": picture.asked.map { t.label("desk.asked_source", $0.rawValue) }
                    .joined(separator: t["common.list_separator"]),
            ]),
            playNoHistory: picture.unavailable.contains(.playHistory) ? t["desk.play_no_history"] : nil)
    }

    /// The positions of the transactions page `page` shows, that page (the last when `page` is
    /// past it) and how many pages there are. Findings first (most severe first), then the rest in
    /// the picture's order (oldest first). The positions are sorted, not the transactions: moving a
    /// thousand large values about was an eighth of the page's CPU.
    static func shown(_ transactions: [CustomerPicture.Transaction], page: Int) -> (positions: [Int], page: Int, pages: Int) {
        let ranks = transactions.map { $0.finding?.severity.rank ?? Int.max }
        let ordered = ranks.indices.sorted { a, b in ranks[a] != ranks[b] ? ranks[a] < ranks[b] : a < b }
        let pages = max(1, (ordered.count + pageSize - 1) / pageSize)
        let current = min(max(1, page), pages)
        return (Array(ordered.dropFirst((current - 1) * pageSize).prefix(pageSize)), current, pages)
    }

    /// The ids of the transactions page `page` shows, in the page's order.
    static func shownIDs(_ transactions: [CustomerPicture.Transaction], page: Int) -> [String] {
        shown(transactions, page: page).positions.map { transactions[$0].transactionID }
    }

    static func transaction(
        _ transaction: CustomerPicture.Transaction, answers: [ConsumptionAnswerRecord], reader: Reader
    ) -> DeskPage.Transaction {
        let t = reader.catalog
        var facts: [ItemPage.KeyValue] = []
        // The store is said for a Google Play transaction (the App Store's are the page's default).
        if transaction.store == .googlePlay {
            facts.append(.init(key: t["item.store"], value: t.label("store", transaction.store.rawValue)))
        }
        func fact(_ key: String, _ value: String?) {
            if let value, !value.isEmpty { facts.append(.init(key: t.label("apple_field", key), value: value)) }
        }
        fact("original_transaction_id", transaction.originalTransactionID)
        fact("product_id", transaction.productID)
        fact("product_type", transaction.productType.map { t.label("apple_value.product_type", $0) })
        fact("purchase_date", transaction.purchaseDate.map { reader.minute($0) })
        fact("quantity", transaction.quantity.map(String.init))
        fact("environment", transaction.environment.map(t.environment))
        fact("bundle_id", transaction.bundleID)
        if let price = transaction.priceMilli, let currency = transaction.currency {
            facts.append(.init(key: t["apple.price"], value: reader.money(milli: price, currency: currency)))
        }
        if let revoked = transaction.revocationDate {
            var parts = [reader.minute(revoked)]
            if let reason = transaction.revocationReason {
                parts.append(t.label("apple_value.revocation_reason", String(reason)))
            }
            if let type = transaction.revocationType { parts.append(t.label("apple_value.revocation_type", type)) }
            if let percentage = transaction.revocationPercentage {
                parts.append((Double(percentage) / 1000).formatted(.number.precision(.fractionLength(0...3))) + "%")
            }
            facts.append(.init(key: t.label("apple_field", "revocation_date"), value: parts.joined(separator: " · ")))
        }
        let finding = transaction.finding
        let verdictLabel = finding.map { t.kind($0) } ?? t.label("desk.verdict", transaction.verdict.rawValue)
        let buyer: String
        if let user = transaction.buyer.userID {
            buyer = user + " (" + (transaction.buyer.basis.map(t.basis) ?? t["apple.unknown_basis"]) + ")"
        } else {
            buyer = t["apple.unknown_buyer"]
        }
        let deliveries = transaction.deliveries.map { row in
            ItemPage.Delivery(
                id: String(row.id), transaction: transaction.transactionID, user: row.userID, product: row.productID,
                quantity: String(row.quantity), delivered: reader.minute(row.deliveredAt),
                revokedAt: row.revokedAt.map { reader.minute($0) } ?? "—", revoked: row.revokedAt != nil)
        }
        let uploads = transaction.uploads.map { row in
            var verification = row.verification.map(t.verification) ?? "—"
            if let status = row.appleStatus {
                verification += " (" + t.text("uploads.apple_status", ["status": String(status)]) + ")"
            }
            // Apple's or the parser's own words: data, shown as they came.
            if let error = row.error, !error.isEmpty { verification += ": \(error)" }
            return ItemPage.Upload(
                id: String(row.id), user: row.userID, kind: t.uploadKind(row.kind),
                uploaded: reader.minute(row.uploadedAt), device: "—", verification: verification)
        }
        return DeskPage.Transaction(
            id: transaction.transactionID, verdict: transaction.verdict.rawValue, verdictLabel: verdictLabel,
            isFinding: finding != nil, explanation: finding.map { t.explanation($0) },
            facts: facts,
            sources: transaction.sources.isEmpty
                ? t[transaction.store == .googlePlay ? "apple.none_google_play" : "apple.none"] : transaction.sources.map { t.label("apple_value.source", $0.rawValue) }.joined(separator: ", "),
            buyer: buyer, deliveries: deliveries, hasDeliveries: !deliveries.isEmpty, uploads: uploads,
            hasUploads: !uploads.isEmpty,
            items: transaction.reviewItems.map { item in
                DeskPage.Item(
                    id: item.id, href: "/items/\(item.id)", kindLabel: t.kind(item.kind),
                    statusLabel: t.status(item.status), severity: item.severity.rawValue,
                    severityLabel: t.severity(item.severity))
            },
            hasItems: !transaction.reviewItems.isEmpty,
            refundRequests: RefundRequestRow.rows(answers, reader: reader), hasRefundRequests: !answers.isEmpty)
    }
}

/// The customer page's view model. It and its parts give their values by name (`TemplateValues`),
/// as the frame does (Views.swift): through `Mirror`, rendering a page of 50 transactions was
/// most of the server's time.
struct DeskPage: TemplateValues {
    struct Transaction: TemplateValues {
        let id: String
        let verdict: String
        let verdictLabel: String
        let isFinding: Bool
        let explanation: String?
        let facts: [ItemPage.KeyValue]
        let sources: String
        let buyer: String
        let deliveries: [ItemPage.Delivery]
        let hasDeliveries: Bool
        let uploads: [ItemPage.Upload]
        let hasUploads: Bool
        let items: [Item]
        let hasItems: Bool
        /// What was answered to Apple about refunds of this purchase, and Apple's decision.
        let refundRequests: [RefundRequestRow]
        let hasRefundRequests: Bool

        static let byName: TemplateNames<Self> = [
            "id": \.id, "verdict": \.verdict, "verdictLabel": \.verdictLabel, "isFinding": \.isFinding,
            "explanation": \.explanation, "facts": \.facts, "sources": \.sources, "buyer": \.buyer,
            "deliveries": \.deliveries, "hasDeliveries": \.hasDeliveries, "uploads": \.uploads,
            "hasUploads": \.hasUploads, "items": \.items, "hasItems": \.hasItems, "refundRequests": \.refundRequests,
            "hasRefundRequests": \.hasRefundRequests,
        ]
    }

    struct Item: TemplateValues {
        let id: Int64
        let href: String
        let kindLabel: String
        let statusLabel: String
        let severity: String
        let severityLabel: String

        static let byName: TemplateNames<Self> = [
            "id": \.id, "href": \.href, "kindLabel": \.kindLabel, "statusLabel": \.statusLabel, "severity": \.severity,
            "severityLabel": \.severityLabel,
        ]
    }

    /// What was typed, kept in the search field.
    let query: String
    /// A refusal or a hint instead of a picture.
    let notice: String?
    let csrf: String
    var summary: String?
    /// The recognised value and its kind, posted back by the enqueue button.
    var value: String = ""
    var kind: String = ""
    var canEnqueue = false
    var transactions: [Transaction] = []
    /// The pager, when the customer has more transactions than one page shows.
    var pageText: String?
    var prevHref: String?
    var nextHref: String?
    /// Which sources the lookup asked, and that Google Play has no history by account to ask.
    var asked: String?
    var playNoHistory: String?

    static let byName: TemplateNames<Self> = [
        "query": \.query, "notice": \.notice, "csrf": \.csrf, "summary": \.summary, "value": \.value, "kind": \.kind,
        "canEnqueue": \.canEnqueue, "transactions": \.transactions, "pageText": \.pageText, "prevHref": \.prevHref,
        "nextHref": \.nextHref, "asked": \.asked, "playNoHistory": \.playNoHistory,
    ]
}
