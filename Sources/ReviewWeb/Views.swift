import Foundation
import Reconciliation

// View models for the templates: plain values, already formatted, so the templates hold no logic
// beyond sections. Strings are escaped by the templates, never here.

struct SessionView {
    let name: String
    let initial: String
    let csrf: String
    var onQueue = false
    var onRuns = false

    init(_ session: SessionStore.Session) {
        name = session.name
        initial = session.name.first.map { String($0).uppercased() } ?? "?"
        csrf = session.csrfToken
    }
}

struct FlashView {
    let text: String
    let isError: Bool
}

struct OptionView {
    let value: String
    let label: String
    let selected: Bool
}

struct LoginPage {
    let session: SessionView? = nil
    let flash: FlashView? = nil
    var error: String?
    var next: String
    var name: String
}

struct ErrorPage {
    let session: SessionView?
    let flash: FlashView? = nil
    let heading: String
    let message: String
}

struct QueuePage {
    struct FilterView {
        let user: String
        let product: String
        let transaction: String
        let since: String
        let until: String
    }

    struct KindCount {
        let label: String
        let severity: String
        let count: Int
        let zero: Bool
        let active: Bool
        let href: String
    }

    struct Row {
        let id: Int64
        let href: String
        let severity: String
        let kindLabel: String
        let status: String
        let statusLabel: String
        let transaction: String
        let user: String
        let product: String
        let assignee: String
        let detected: String
    }

    let session: SessionView
    let flash: FlashView?
    let filter: FilterView
    let statusOptions: [OptionView]
    let kindOptions: [OptionView]
    let severityOptions: [OptionView]
    let allKinds: Bool
    let allKindsHref: String
    let kindCounts: [KindCount]
    let items: [Row]
    let hasItems: Bool
    let total: Int
    let page: Int
    let pageCount: Int
    let prevHref: String?
    let nextHref: String?
    let exportHref: String
}

struct ItemPage {
    struct ItemView {
        let id: Int64
        let kindLabel: String
        /// What the item's user is to the finding: the buyer, or the account holding the goods.
        let userLabel: String
        let severity: String
        let status: String
        let statusLabel: String
        let explanation: String
        let suggestedAction: String
        let transaction: String
        let originalTransaction: String
        let user: String
        let product: String
        let detected: String
        let firstSeenRun: Int64
        let lastSeenRun: Int64
        let assignee: String
        let decision: String?
        let note: String?
        /// Apple's price times quantity, when known (`6.000 CNY`).
        let value: String?
    }

    struct KeyValue {
        let key: String
        let value: String
    }

    struct Delivery {
        let id: String
        let transaction: String
        let user: String
        let product: String
        let quantity: String
        let delivered: String
        let revokedAt: String
        let revoked: Bool
    }

    struct Upload {
        let id: String
        let user: String
        let kind: String
        let uploaded: String
        let device: String
        let verification: String
    }

    struct Buyer {
        let user: String
        let basis: String
    }

    struct Event {
        let when: String
        let actor: String
        let change: String
        let note: String?
    }

    struct Outbox {
        let id: Int64
        let description: String
        let decidedBy: String
        let state: String
    }

    let session: SessionView
    let flash: FlashView?
    let csrf: String
    /// The top of the working queue other than this item, to go on without a trip to the list.
    let nextHref: String?
    let item: ItemView
    let canAct: Bool
    let claimable: Bool
    let claimedByMe: Bool
    let claimedByOther: Bool
    let closedMessage: String
    let resolutionOptions: [OptionView]
    let apple: [KeyValue]
    let hasApple: Bool
    let buyer: Buyer?
    let deliveries: [Delivery]
    let hasDeliveries: Bool
    let uploads: [Upload]
    let hasUploads: Bool
    let events: [Event]
    let outbox: Outbox?
}

struct RunsPage {
    struct Run {
        let id: Int64
        let status: String
        let statusLabel: String
        let dryRun: Bool
        let window: String
        let started: String
        let uploads: Int
        let findings: Int
        let newFindings: Int
        let reportHref: String?
    }

    let session: SessionView
    let flash: FlashView?
    let runs: [Run]
    let hasRuns: Bool
}

/// Formatting shared by the pages.
enum Format {
    static func label(_ raw: String) -> String {
        let spaced = raw.replacingOccurrences(of: "_", with: " ")
        return spaced.prefix(1).uppercased() + spaced.dropFirst()
    }

    static func minute(_ date: Date?) -> String {
        guard let date else { return "—" }
        let text = TimeExpression.format(date)
        return String(text.prefix(16)).replacingOccurrences(of: "T", with: " ") + " UTC"
    }

    static func day(_ date: Date) -> String { String(TimeExpression.format(date).prefix(10)) }

    static func text(_ value: Any?) -> String {
        switch value {
        case nil, is NSNull: return "—"
        case let string as String: return string.isEmpty ? "—" : string
        case let number as NSNumber: return number.stringValue
        case let value?:
            guard JSONSerialization.isValidJSONObject(value),
                let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
            else { return "\(value)" }
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// A timestamp from the evidence JSON (PostgreSQL's `to_jsonb` text) shown to the minute.
    static func evidenceTime(_ value: Any?) -> String {
        guard let text = value as? String, !text.isEmpty else { return "—" }
        let trimmed = text.replacingOccurrences(of: "T", with: " ")
        return trimmed.count >= 16 ? String(trimmed.prefix(16)) + " UTC" : trimmed
    }

    /// "iPhone14,5 · iOS 17.2 · app 3.1" from the device JSON the client sent, whatever its keys.
    static func device(_ value: Any?) -> String {
        guard let device = value as? [String: Any], !device.isEmpty else { return "—" }
        var parts: [String] = []
        var used: Set<String> = []
        for (keys, prefix) in [(["model", "device_model"], ""), (["os", "os_version", "system_version"], "iOS "),
                               (["app_version", "app", "version"], "app ")] {
            if let key = keys.first(where: { device[$0] != nil }) {
                let value = text(device[key])
                parts.append(prefix.isEmpty || value.lowercased().hasPrefix(prefix.lowercased().trimmingCharacters(in: .whitespaces))
                    ? value : prefix + value)
                used.insert(key)
            }
        }
        for key in device.keys.sorted() where !used.contains(key) { parts.append("\(key) \(text(device[key]))") }
        return parts.joined(separator: " · ")
    }

    /// What a kind means, in a sentence for the item page.
    static func explanation(_ kind: String) -> String {
        switch FindingKind(rawValue: kind) {
        case .missedDelivery: "Apple confirms this purchase, but the app never delivered it."
        case .duplicateDelivery: "The app delivered this purchase more than once."
        case .wrongAccount: "The goods went to another account than the buyer's."
        case .productMismatch: "The app delivered another product than the one bought."
        case .quantityMismatch: "The app delivered another quantity than the one bought."
        case .refundedDelivery: "Apple refunded or revoked this purchase, but the goods were not taken back."
        case .unverifiedDelivery: "The app delivered goods for a transaction Apple does not confirm."
        case .environmentMismatch: "A sandbox (test) purchase was delivered as if it were real money."
        case .foreignBundle: "An upload belongs to another app's bundle id."
        case .sharedReceipt: "Several accounts uploaded the same transaction."
        case nil: "A discrepancy of kind \(kind)."
        }
    }
}
