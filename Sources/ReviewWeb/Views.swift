import Foundation
import Mustache
import Reconciliation

// View models for the templates: plain values, already formatted, so the templates hold no logic
// beyond sections. Strings are escaped by the templates, never here.
//
// What the desk page renders (the frame, the desk's view model and the parts it shares with the
// item page) gives its values by name (`TemplateValues`) rather than through `Mirror`,
// swift-mustache's default, which reflects the whole value at every lookup: with 50 transaction
// cards of some 30 lookups each, most of them `{{t.…}}` climbing Transaction → DeskPage →
// PageFrame, reflection was most of the page's time. Each `byName` table gives every stored
// property under its own name; a nil optional is nil, and the template looks further up, as with
// `Mirror`. `DeskViewsByNameTests` checks that no property is left out.

/// What every page shows around its content; the object the templates render against. The page's
/// own view model is under `page`, and the templates open it with `{{#page}}`, so the catalog
/// (`{{t.…}}`) and the header stay in reach from inside it.
struct PageFrame: TemplateValues {
    enum Tab { case queue, runs, insights }

    struct LanguageLink: TemplateValues {
        let code: String
        let label: String
        let href: String
        let active: Bool

        static let byName: TemplateNames<Self> = [
            "code": \.code, "label": \.label, "href": \.href, "active": \.active,
        ]
    }

    struct Field: TemplateValues {
        let name: String
        let value: String

        static let byName: TemplateNames<Self> = ["name": \.name, "value": \.value]
    }

    let t: CatalogNode
    let lang: String
    let title: String
    let session: SessionView?
    let flash: FlashView?
    let languages: [LanguageLink]
    /// The time zone form goes back to the same page, with the page's own query kept.
    let path: String
    let keep: [Field]
    let timeZones: [OptionView]
    let page: Any

    init(page: Any, title: String, context: some ReviewContext, flash: FlashView?, tab: Tab?) {
        self.init(
            page: page, title: title, reader: context.reader, path: context.path, query: context.query,
            signedIn: context.signedIn, flash: flash, tab: tab)
    }

    /// The frame from the request's parts (the tests build one without a request).
    init(
        page: Any, title: String, reader: Reader, path: String, query: String?, signedIn: SessionStore.Session?,
        flash: FlashView?, tab: Tab?
    ) {
        t = CatalogNode(reader.catalog)
        lang = reader.language.rawValue
        self.title = title
        session = signedIn.map { SessionView($0, tab: tab) }
        self.flash = flash
        self.page = page
        self.path = path
        let query = Form(query ?? "")
        languages = Language.allCases.map { language in
            let pairs = query.pairs.filter { $0.0 != "lang" } + [("lang", language.rawValue)]
            return LanguageLink(
                code: language.rawValue, label: reader.catalog["language.\(language.rawValue)"],
                href: path + "?" + Form.encode(pairs), active: language == reader.language)
        }
        keep = query.pairs.filter { $0.0 != "tz" && $0.0 != "lang" }.map { Field(name: $0.0, value: $0.1) }
        timeZones = TimeZoneChoice.options(for: reader)
    }

    static let byName: TemplateNames<Self> = [
        "t": \.t, "lang": \.lang, "title": \.title, "session": \.session, "flash": \.flash, "languages": \.languages,
        "path": \.path, "keep": \.keep, "timeZones": \.timeZones, "page": \.page,
    ]
}

struct SessionView: TemplateValues {
    let name: String
    let initial: String
    let csrf: String
    let onQueue: Bool
    let onRuns: Bool
    let onInsights: Bool

    init(_ session: SessionStore.Session, tab: PageFrame.Tab? = nil) {
        name = session.name
        initial = session.name.first.map { String($0).uppercased() } ?? "?"
        csrf = session.csrfToken
        onQueue = tab == .queue
        onRuns = tab == .runs
        onInsights = tab == .insights
    }

    static let byName: TemplateNames<Self> = [
        "name": \.name, "initial": \.initial, "csrf": \.csrf, "onQueue": \.onQueue, "onRuns": \.onRuns,
        "onInsights": \.onInsights,
    ]
}

struct FlashView: TemplateValues {
    let text: String
    let isError: Bool

    init(text: String, isError: Bool) {
        self.text = text
        self.isError = isError
    }

    init(_ flash: SessionStore.Flash) {
        self.init(text: flash.text, isError: flash.isError)
    }

    static let byName: TemplateNames<Self> = ["text": \.text, "isError": \.isError]
}

struct OptionView: TemplateValues {
    let value: String
    let label: String
    let selected: Bool

    static let byName: TemplateNames<Self> = ["value": \.value, "label": \.label, "selected": \.selected]
}

struct LoginPage {
    var error: String?
    var next: String
    var name: String
    /// Each person logs in with their own password (the users file), not the team token.
    var passwords = false
}

struct ErrorPage {
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
        let severityLabel: String
        let kindLabel: String
        let status: String
        let statusLabel: String
        /// The store's code (`google_play`) and its name from the catalog.
        let store: String
        let storeLabel: String
        let transaction: String
        let user: String
        let product: String
        let assignee: String
        let detected: String
        let value: String
    }

    /// The selection form: the filter again as hidden fields (the queue's own choices, such as the
    /// default status, included), and the "everything this filter matches" box.
    struct Bulk {
        struct Field {
            let name: String
            let value: String
        }

        let hidden: [Field]
        let selectAllText: String
    }

    let filter: FilterView
    /// The segment of the Insights page the queue shows the items of, with a link to every item.
    var segmentText: String? = nil
    var clearSegmentHref = "/"
    let statusOptions: [OptionView]
    let kindOptions: [OptionView]
    let severityOptions: [OptionView]
    let storeOptions: [OptionView]
    let allKinds: Bool
    let allKindsHref: String
    let kindCounts: [KindCount]
    let items: [Row]
    let hasItems: Bool
    let totalText: String
    let pageText: String
    let prevHref: String?
    let nextHref: String?
    let exportHref: String
    let bulk: Bulk
}

struct ItemPage {
    struct ItemView {
        let id: Int64
        let kindLabel: String
        /// What the item's user is to the finding: the buyer, or the account holding the goods.
        let userLabel: String
        let severity: String
        let severityLabel: String
        let status: String
        let statusLabel: String
        let explanation: String
        let suggestedAction: String
        /// The store's name from the catalog, and what it calls the transaction id (Google
        /// Play: the order id).
        let storeLabel: String
        let transactionLabel: String
        let originalTransactionLabel: String
        let transaction: String
        let originalTransaction: String
        let user: String
        let product: String
        /// When, and in which runs (first and last) it was seen.
        let detected: String
        let assignee: String
        let decision: String?
        let note: String?
        /// Apple's price times quantity, when known (`¥6.00`).
        let value: String?
    }

    // KeyValue, Delivery and Upload are the desk page's too, and give their values by name.
    struct KeyValue: TemplateValues {
        let key: String
        let value: String

        static let byName: TemplateNames<Self> = ["key": \.key, "value": \.value]
    }

    struct Delivery: TemplateValues {
        let id: String
        let transaction: String
        let user: String
        let product: String
        let quantity: String
        let delivered: String
        let revokedAt: String
        let revoked: Bool

        static let byName: TemplateNames<Self> = [
            "id": \.id, "transaction": \.transaction, "user": \.user, "product": \.product, "quantity": \.quantity,
            "delivered": \.delivered, "revokedAt": \.revokedAt, "revoked": \.revoked,
        ]
    }

    struct Upload: TemplateValues {
        let id: String
        let user: String
        let kind: String
        let uploaded: String
        let device: String
        let verification: String

        static let byName: TemplateNames<Self> = [
            "id": \.id, "user": \.user, "kind": \.kind, "uploaded": \.uploaded, "device": \.device,
            "verification": \.verification,
        ]
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
        let description: String
        /// `Outbox #12 · waiting for the app`.
        let line: String
    }

    /// A decision waiting for a second person's approval.
    struct Awaiting {
        /// `Granted by mei on …, waiting for a second person's approval`.
        let text: String
        let note: String?
        /// The reader is not the decider: they may approve.
        let canApprove: Bool
        /// The decision shown, sent back by the approve and reject forms (`pending_resolution`,
        /// `pending_at`) so that neither applies another one decided meanwhile.
        let resolution: String
        let at: String
    }

    let csrf: String
    /// The top of the working queue other than this item, to go on without a trip to the list.
    let nextHref: String?
    /// The customer page of the item's user (`/desk?q=<user id>`).
    let customerHref: String?
    let item: ItemView
    let canAct: Bool
    let claimable: Bool
    let claimedByMe: Bool
    let claimedByOther: Bool
    let closedMessage: String
    /// The pending decision, while the item awaits approval.
    let awaiting: Awaiting?
    /// `Approved by … on …`, for a decision that needed approval.
    let approvedText: String?
    let resolutionOptions: [OptionView]
    /// What each action the kind allows would do, shown beside the decision and sent back with it.
    struct ProposedAction {
        let resolution: String
        let text: String
        /// The action as ``ActionDraft``'s JSON: the form's `shown_<resolution>`.
        let shown: String
    }
    let proposedActions: [ProposedAction]
    let apple: [KeyValue]
    let hasApple: Bool
    /// The heading of the store's record of the transaction, and what the page says when there is
    /// none (Apple's or Google Play's, SPEC section 18).
    let storeHeading: String
    let storeNone: String
    let buyer: Buyer?
    let deliveries: [Delivery]
    let hasDeliveries: Bool
    let uploads: [Upload]
    let hasUploads: Bool
    let events: [Event]
    let outbox: Outbox?
    /// What was answered to Apple about refunds of the item's transaction, and Apple's decision.
    let refundRequests: [RefundRequestRow]
    let hasRefundRequests: Bool
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
        /// What each policy decided in the run: `routine-small-pack: 3 (¥18.00)`.
        var policies: [String] = []
    }

    let runs: [Run]
    let hasRuns: Bool

    /// A pass of the notification receiver, listed apart from the runs.
    struct ReceiverPass {
        let id: Int64
        let started: String
        let applied: Int
        let judged: Int
        let opened: Int
        var policies: [String] = []
    }

    // Stored, not computed: the templates read properties by reflection.
    var receiverPasses: [ReceiverPass] = [] { didSet { hasReceiverPasses = !receiverPasses.isEmpty } }
    private(set) var hasReceiverPasses = false
}

/// Formatting shared by the pages; dates and words come from the reader.
enum Format {
    static func text(_ value: String?) -> String {
        guard let value, !value.isEmpty else { return "—" }
        return value
    }

    /// A timestamp from the evidence JSON (PostgreSQL's `to_jsonb` text) shown to the minute in
    /// the reader's time zone.
    static func evidenceTime(_ text: String?, _ reader: Reader) -> String {
        guard let text, !text.isEmpty else { return "—" }
        guard let date = evidenceDate(text) else { return text }
        return reader.minute(date)
    }

    /// PostgreSQL's JSON timestamps: `2026-11-20T08:15:00+00:00`, with or without fractions.
    static func evidenceDate(_ text: String) -> Date? {
        if let date = TimeExpression.rfc3339(text) { return date }
        // Fractions of a second: drop them, the page shows minutes.
        guard let dot = text.firstIndex(of: "."), let zone = text[dot...].firstIndex(where: { "+-Z".contains($0) })
        else { return nil }
        return TimeExpression.rfc3339(String(text[..<dot]) + String(text[zone...]))
    }

    /// "iPhone14,5 · iOS 17.2 · app 3.1" from the device JSON the client sent, whatever its keys.
    static func device(_ value: JSONValue?, _ t: Catalog) -> String {
        guard case .object(let device)? = value, !device.isEmpty else { return "—" }
        var parts: [String] = []
        var used: Set<String> = []
        for (keys, prefix) in [(["model", "device_model"], ""), (["os", "os_version", "system_version"], "iOS "),
                               (["app_version", "app", "version"], t["device.app"] + " ")] {
            if let key = keys.first(where: { device[$0] != nil }) {
                let value = text(device[key]?.text)
                parts.append(prefix.isEmpty || value.lowercased().hasPrefix(prefix.lowercased().trimmingCharacters(in: .whitespaces))
                    ? value : prefix + value)
                used.insert(key)
            }
        }
        for key in device.keys.sorted() where !used.contains(key) { parts.append("\(key) \(text(device[key]?.text))") }
        return parts.joined(separator: " · ")
    }
}

struct BulkPage {
    struct Row {
        let id: Int64
        let href: String
        let kindLabel: String
        let transaction: String
        let user: String
        let product: String
        let value: String
    }

    let csrf: String
    /// The digest of exactly the items shown (`BulkDecision.digest`), which the POST must match.
    let selection: String
    let action: String
    let backHref: String
    let count: Int
    let countText: String
    /// How many of each kind the selection holds (`3 × Missed delivery`).
    let kinds: [String]
    let values: [String]
    let firstText: String
    let items: [Row]
    let canDecide: Bool
    let none: String?
    let tooMany: String?
    let approval: String?
    let submitText: String
    let options: [OptionView]
}
