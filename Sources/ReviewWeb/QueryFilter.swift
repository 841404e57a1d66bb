import Foundation
import Reconciliation

/// The queue's filter as it travels in the page's query string (`/?status=active&kind=…`), so a
/// filtered view can be bookmarked, shared, paged and exported.
struct QueryFilter {
    /// The status menu: the working set by default, each status, or everything. Labels are the
    /// catalog's `status_filter.<value>`.
    static let statusChoices: [(value: String, statuses: [ReviewStatus])] = [
        ("active", [.open, .inReview, .awaitingApproval]),
        ("open", [.open]),
        ("in_review", [.inReview]),
        ("awaiting_approval", [.awaitingApproval]),
        ("resolved", [.resolved]),
        ("dismissed", [.dismissed]),
        ("auto_resolved", [.autoResolved]),
        ("all", []),
    ]

    static let keys = [
        "status", "kind", "severity", "store", "user", "product", "transaction", "assignee", "since", "until", "segment",
        "page",
    ]

    /// `segment=app_version:4.2.1`: the items of one segment of the Insights page (SPEC section 19).
    var segment: (dimension: InsightDimension, value: String)? {
        guard let text = values["segment"], let colon = text.firstIndex(of: ":"),
              let dimension = InsightDimension(rawValue: String(text[..<colon]))
        else { return nil }
        return (dimension, String(text[text.index(after: colon)...]))
    }

    private var values: [String: String] = [:]

    init(query: String?) {
        let form = Form(query ?? "")
        for key in Self.keys {
            if let value = form[key]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { values[key] = value }
        }
    }

    func value(_ key: String) -> String? { values[key] }

    /// The page asked for: 1 when none or not a whole number (a stale link still opens), nil when
    /// a whole number beyond `ReviewQueue.maximumPage` (a 400, not an overflow).
    var page: Int? {
        guard let text = values["page"], !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return 1
        }
        guard let page = Int(text), page <= ReviewQueue.maximumPage else { return nil }
        return max(page, 1)
    }

    /// The status menu's current choice.
    var statusChoice: String {
        let value = values["status"] ?? "active"
        return Self.statusChoices.contains { $0.value == value } ? value : "active"
    }

    /// The service filter. Unknown values are ignored rather than refused: a stale bookmark still opens.
    var filter: ReviewFilter {
        var filter = ReviewFilter()
        filter.statuses = Self.statusChoices.first { $0.value == statusChoice }?.statuses ?? []
        if let kind = values["kind"].flatMap(FindingKind.init(rawValue:)) { filter.kinds = [kind] }
        if let severity = values["severity"].map(Severity.init(rawValue:)), Severity.known.contains(severity) {
            filter.severities = [severity]
        }
        filter.store = values["store"].flatMap(Store.init(rawValue:))
        filter.userID = values["user"]
        filter.productID = values["product"]
        filter.transactionID = values["transaction"]
        filter.assignee = values["assignee"]
        filter.since = values["since"].flatMap(Self.day)
        // "to" is a whole day: items detected on it are included.
        filter.until = values["until"].flatMap(Self.day).map { $0.addingTimeInterval(86_400) }
        // A segment's items are only known once resolved (``filter(segmentItems:)``): until then it
        // matches nothing, so that no path that forgets to resolve it (a bulk decision, an export)
        // ever takes more than the segment.
        if values["segment"] != nil { filter.ids = [0] }
        return filter
    }

    /// The filter with the segment resolved to its items (none: nothing matches).
    func filter(segmentItems: [Int64]) -> ReviewFilter {
        var filter = self.filter
        filter.ids = segmentItems.isEmpty ? [0] : segmentItems
        return filter
    }

    /// The query string with some values replaced (nil removes one).
    func encoded(replacing changes: [String: String?]) -> String {
        var merged = values
        for (key, value) in changes { merged[key] = value }
        return Form.encode(Self.keys.compactMap { key in merged[key].map { (key, $0) } })
    }

    private static func day(_ text: String) -> Date? {
        guard text.count == 10 else { return nil }
        return TimeExpression.rfc3339(text + "T00:00:00Z")
    }
}
