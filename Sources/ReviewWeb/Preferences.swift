import Foundation
import Hummingbird
import Reconciliation

/// Settles the language and time zone of every page. `?lang=` and `?tz=` (the switch in every
/// page's header) win and are remembered in the session; then what the session remembers; then
/// the browser's `Accept-Language`, and the language's usual time zone. Before login, `?lang=`
/// applies to the login page and travels in its form into the new session.
struct PreferencesMiddleware: ContextMiddleware {
    let sessions: SessionStore

    func settle(_ context: inout ReviewRequestContext, for request: Request) async {
        context.method = request.method
        context.path = Self.sameSitePath(request.uri.path)
        context.query = request.uri.query
        let query = Form(request.uri.query ?? "")
        let asked = query["lang"].flatMap(Language.init(tag:))
        let askedZone = query["tz"].flatMap(TimeZoneChoice.zone(named:))
        if let session = context.session, asked != nil || askedZone != nil {
            context.session = await sessions.setPreferences(
                language: asked, timeZone: askedZone?.identifier, for: session.id) ?? session
        }
        let language = asked ?? context.session?.language
            ?? Language(acceptLanguage: request.headers[.init("Accept-Language")!])
        let zone = askedZone ?? context.session?.timeZone.flatMap(TimeZoneChoice.zone(named:))
        context.reader = Reader(language: language, timeZone: zone)
    }

    /// The path the page's own links (language switch, time zone form, the way back after
    /// login) are built on: the request's path when it is a plain path of this site, else `/`.
    /// `//evil.example/login` (a 404) would otherwise make `//evil.example/login?lang=…`, a link
    /// to another host; a backslash is read as a slash by browsers.
    static func sameSitePath(_ path: String) -> String {
        guard path.hasPrefix("/"), !path.hasPrefix("//"), !path.contains("\\"),
            !path.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " })
        else { return "/" }
        return path
    }
}

/// The time zones offered in every page's header. Pages run no script, so the browser's own zone
/// is unknown: a reader picks one, and until then sees the usual zone of their language (UTC for
/// English, Beijing time for Simplified Chinese).
enum TimeZoneChoice {
    /// IANA name → catalog key under `time_zone.`.
    static let all: [(identifier: String, key: String)] = [
        ("UTC", "utc"), ("Asia/Shanghai", "asia_shanghai"), ("Asia/Hong_Kong", "asia_hong_kong"),
        ("Asia/Singapore", "asia_singapore"), ("Asia/Tokyo", "asia_tokyo"), ("Europe/London", "europe_london"),
        ("America/Los_Angeles", "america_los_angeles"),
    ]

    /// One of the offered zones; nil for anything else, so a query cannot name an arbitrary zone.
    static func zone(named name: String) -> TimeZone? {
        guard all.contains(where: { $0.identifier == name }) else { return nil }
        return name == "UTC" ? .gmt : TimeZone(identifier: name)
    }

    static func options(for reader: Reader) -> [OptionView] {
        let current = reader.timeZone.identifier == "GMT" ? "UTC" : reader.timeZone.identifier
        return all.map { choice in
            let zone = zone(named: choice.identifier) ?? .gmt
            let label = reader.catalog["time_zone.\(choice.key)"]
            let offset = Reader(language: reader.language, timeZone: zone).zoneName
            return OptionView(
                value: choice.identifier, label: label == offset ? label : "\(label) (\(offset))",
                selected: choice.identifier == current)
        }
    }
}
