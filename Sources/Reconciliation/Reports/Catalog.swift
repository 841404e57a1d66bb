import AppStore
import Foundation

/// A language the pages and reports are written in (SPEC section 15). The CLI, logs and
/// `report.json` stay English whatever is chosen here.
public enum Language: String, Sendable, CaseIterable {
    case english = "en"
    case simplifiedChinese = "zh-Hans"

    /// The locale numbers and money are formatted in.
    public var locale: Locale {
        switch self {
        case .english: Locale(identifier: "en_US")
        case .simplifiedChinese: Locale(identifier: "zh_Hans_CN")
        }
    }

    /// The time zone a reader of this language most likely lives in, until they choose one.
    public var defaultTimeZone: TimeZone {
        switch self {
        case .english: .gmt
        case .simplifiedChinese: TimeZone(identifier: "Asia/Shanghai") ?? .gmt
        }
    }

    /// A language tag as a person or a browser writes it: `zh`, `zh-CN`, `zh_Hans`, `zh-SG`, `en-GB`…
    /// Traditional Chinese (`zh-TW`, `zh-HK`, `zh-Hant`) is not offered, so it is nil like any other.
    public init?(tag: String) {
        let parts = tag.lowercased().replacingOccurrences(of: "_", with: "-").split(separator: "-").map(String.init)
        switch parts.first {
        case "en": self = .english
        case "zh":
            let rest = Set(parts.dropFirst())
            guard rest.isDisjoint(with: ["hant", "tw", "hk", "mo"]) else { return nil }
            self = .simplifiedChinese
        default: return nil
        }
    }

    /// The first language of ours an `Accept-Language` header asks for, by quality; English otherwise.
    public init(acceptLanguage header: String?) {
        var ranked: [(tag: String, quality: Double, position: Int)] = []
        for (position, part) in (header ?? "").split(separator: ",").enumerated() {
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = fields.first, !tag.isEmpty else { continue }
            var quality = 1.0
            for field in fields.dropFirst() where field.hasPrefix("q=") {
                quality = Double(field.dropFirst(2)) ?? 0
            }
            if quality > 0 { ranked.append((tag, quality, position)) }
        }
        ranked.sort { $0.quality != $1.quality ? $0.quality > $1.quality : $0.position < $1.position }
        self = ranked.lazy.compactMap { Language(tag: $0.tag) }.first ?? .english
    }
}

/// Every visible string of the pages and of `report.html` / `report.md` in one language, from the
/// embedded `catalogs/<language>.json`. Keys are dotted paths into that file (`kind.missed_delivery.name`).
public struct Catalog: Sendable {
    public let language: Language
    /// Dotted key → text.
    public let strings: [String: String]
    /// Every dotted prefix that has keys under it (`kind`, `kind.missed_delivery`), for templates
    /// that walk the catalog as a tree (`{{t.queue.heading}}`).
    public let groups: Set<String>

    /// The catalog of a language; loaded once, checked by the catalog tests.
    public static func of(_ language: Language) -> Catalog {
        switch language {
        case .english: english
        case .simplifiedChinese: simplifiedChinese
        }
    }

    private static let english = load(.english)
    private static let simplifiedChinese = load(.simplifiedChinese)

    static func load(_ language: Language) -> Catalog {
        guard let data = EmbeddedFiles.data("catalogs/\(language.rawValue).json"),
            let tree = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { preconditionFailure("the embedded catalog catalogs/\(language.rawValue).json is missing or not JSON") }
        var strings: [String: String] = [:]
        var groups: Set<String> = []
        func walk(_ node: [String: Any], prefix: String) {
            for (name, value) in node {
                let key = prefix.isEmpty ? name : prefix + "." + name
                if let text = value as? String {
                    strings[key] = text
                } else if let child = value as? [String: Any] {
                    groups.insert(key)
                    walk(child, prefix: key)
                }
            }
        }
        walk(tree, prefix: "")
        return Catalog(language: language, strings: strings, groups: groups)
    }

    /// The text of a key; the key itself when missing, so a gap shows instead of vanishing
    /// (the catalog tests keep both files complete).
    public subscript(_ key: String) -> String { strings[key] ?? key }

    /// The text of a key with `{name}` placeholders filled in.
    public func text(_ key: String, _ values: [String: String]) -> String {
        var text = self[key]
        for (name, value) in values { text = text.replacingOccurrences(of: "{\(name)}", with: value) }
        return text
    }

    /// The label of a value from an open set (`status.open`, `run_status.failed`): the value itself
    /// when the catalog does not know it yet, so a new value is shown rather than lost.
    public func label(_ group: String, _ value: String) -> String { strings["\(group).\(value)"] ?? value }

    public func kind(_ kind: FindingKind) -> String { self["kind.\(kind.rawValue).name"] }
    public func explanation(_ kind: FindingKind) -> String { self["kind.\(kind.rawValue).explanation"] }
    public func severity(_ severity: Severity) -> String { label("severity", severity.rawValue) }
    public func status(_ status: ReviewStatus) -> String { self["status.\(status.rawValue)"] }
    public func resolution(_ resolution: Resolution) -> String { self["resolution.\(resolution.rawValue)"] }
    public func suggestedAction(_ action: SuggestedAction) -> String { label("action", action.rawValue) }
    public func runStatus(_ status: RunStatus) -> String { label("run_status", status.rawValue) }
    public func environment(_ environment: Settings.Environment) -> String {
        label("environment", environment.rawValue)
    }
    /// A store's environment as the evidence and the desk hold it (Apple's `Production`, `Sandbox`);
    /// a value the catalog does not know shows as it came.
    public func environment(_ environment: AppStoreEnvironment) -> String {
        label("environment", environment.rawValue.lowercased())
    }
    /// How an upload's verification ended (`verification.verified`).
    public func verification(_ state: VerificationState) -> String { label("verification", state.rawValue) }
    /// What an upload carried (`upload_kind.play_purchase`).
    public func uploadKind(_ kind: UploadKind) -> String { label("upload_kind", kind.rawValue) }
    /// How the diff knows who bought a transaction (`basis.app_account_token`).
    public func basis(_ basis: BuyerBasis) -> String { label("basis", basis.rawValue) }
    /// A store's name (`store.app_store`: "App Store").
    public func store(_ store: Store) -> String { self["store.\(store.rawValue)"] }
    /// What a store calls an item's transaction id: Google Play's is its order id (SPEC section 18).
    public func transactionLabel(_ store: Store) -> String {
        self[store == .googlePlay ? "item.order_id" : "item.transaction"]
    }
}

/// How one reader sees the pages or a report: the language's catalog, and dates in their time zone.
public struct Reader: Sendable {
    public let catalog: Catalog
    public let timeZone: TimeZone

    public init(language: Language, timeZone: TimeZone? = nil) {
        catalog = Catalog.of(language)
        self.timeZone = timeZone ?? language.defaultTimeZone
    }

    /// English in UTC: what reports were before languages existed.
    public static let standard = Reader(language: .english, timeZone: .gmt)

    public var language: Language { catalog.language }

    /// `2026-11-23 13:45 UTC+8`: to the minute, with the zone, so a date pasted into a ticket
    /// still says when it was.
    public func minute(_ date: Date?) -> String {
        guard let date else { return catalog["common.none"] }
        return Self.stamp(date, in: timeZone, length: 16) + " " + Self.zoneName(timeZone, at: date)
    }

    /// `2026-11-23 13:45:07 UTC+8`.
    public func second(_ date: Date) -> String {
        Self.stamp(date, in: timeZone, length: 19) + " " + Self.zoneName(timeZone, at: date)
    }

    /// `2026-11-23`, the day in the reader's time zone.
    public func day(_ date: Date) -> String { Self.stamp(date, in: timeZone, length: 10) }

    /// `UTC` or `UTC+8` / `UTC-3:30`.
    public var zoneName: String { Self.zoneName(timeZone, at: Date()) }

    /// An amount in milliunits in the locale's currency format, with the currency's decimals
    /// (``Money``): `¥68.00` for CNY in zh-Hans, `¥1,500` for JPY in English.
    public func money(milli: Int64, currency: String) -> String {
        Money(milli: milli, currency: currency).text(in: catalog.language.locale)
    }

    /// A whole number with the locale's grouping.
    public func number(_ value: Int) -> String { value.formatted(.number.locale(catalog.language.locale)) }

    static func zoneName(_ zone: TimeZone, at date: Date) -> String {
        let offset = zone.secondsFromGMT(for: date)
        guard offset != 0 else { return "UTC" }
        let minutes = abs(offset) / 60
        return "UTC" + (offset < 0 ? "-" : "+") + String(minutes / 60) + (minutes % 60 == 0 ? "" : String(format: ":%02d", minutes % 60))
    }

    private static func stamp(_ date: Date, in zone: TimeZone, length: Int) -> String {
        let shifted = date.addingTimeInterval(TimeInterval(zone.secondsFromGMT(for: date)))
        return String(TimeExpression.format(shifted).prefix(length)).replacingOccurrences(of: "T", with: " ")
    }
}
