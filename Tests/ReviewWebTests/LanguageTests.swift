import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Mustache
import Postgres
@testable import Reconciliation
@testable import ReviewWeb
import TestSupport
import Testing

/// The pages in English and Simplified Chinese (SPEC section 15): every word from a catalog,
/// chosen by `Accept-Language` or the switch, remembered in the session.
@Suite("Review pages in two languages")
struct LanguageTests {
    let database: TestDatabase
    let connection: Connection
    let ids: [String: Int64]

    init() throws {
        (database, connection) = try TestDatabase.migrated("reviewlang")
        ids = try ReviewFixtures.seed(on: connection)
    }

    func withApp(_ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let application = try buildApplication(configuration: ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored))
        try await application.test(.router) { client in try await test(client) }
    }

    static func get(
        _ client: any TestClientProtocol, _ uri: String, cookie: String? = nil, language: String? = nil
    ) async throws -> String {
        var headers: HTTPFields = [:]
        if let cookie { headers[.cookie] = cookie }
        if let language { headers[.init("Accept-Language")!] = language }
        let response = try await client.execute(uri: uri, method: .get, headers: headers)
        #expect(response.status == .ok, "\(uri)")
        return String(buffer: response.body)
    }

    /// English labels a Chinese page must not show (data values aside).
    static let englishLabels = [
        "Review queue", "Missed delivery", "Duplicate delivery", "Status", "Severity", "Transaction", "Detected",
        "Log out", "Filter", "Export CSV", "Delivery ledger", "Uploads", "History", "Summary", "Resolve", "Dismiss",
        "Apple transaction", "Buyer", "Suggested action", "detected the discrepancy", "Time zone", "Runs", "Queue",
    ]

    // MARK: Choosing the language

    @Test(arguments: [
        ("zh-CN,zh;q=0.9,en;q=0.8", Language.simplifiedChinese), ("zh", .simplifiedChinese),
        ("zh-Hans-CN", .simplifiedChinese), ("zh-SG", .simplifiedChinese), ("en-US,en;q=0.9", .english),
        ("fr-FR, zh;q=0.5", .simplifiedChinese), ("zh-TW", .english), ("en;q=0.9, zh-CN", .simplifiedChinese),
        ("zh;q=0, en", .english), ("", .english), ("*", .english),
    ])
    func acceptLanguagePicksOneOfOurs(header: String, expected: Language) {
        #expect(Language(acceptLanguage: header) == expected)
    }

    @Test func aChineseBrowserGetsChinesePages() async throws {
        let wrong = try #require(ids["t-w1"])
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let queue = try await Self.get(client, "/", cookie: cookie, language: "zh-CN,zh;q=0.9,en;q=0.8")
            #expect(queue.contains("<html lang=\"zh-Hans\">"))
            #expect(queue.contains("<h1>待处理列表</h1>"))
            #expect(queue.contains("共 7 条"))
            #expect(queue.contains("漏单（已付款未到账） <b>2</b>"))
            for label in Self.englishLabels { #expect(!queue.contains(label), "English left on the queue: \(label)") }

            let item = try await Self.get(client, "/items/\(wrong)", cookie: cookie, language: "zh-CN")
            #expect(item.contains("发错账号"))
            #expect(item.contains("道具发到了别的账号上"))
            #expect(item.contains("付款玩家： <b>u4</b>"))
            // Money in the locale's format, dates in Beijing time (08:15 UTC is 16:15 there).
            #expect(item.contains("¥6.00"))
            #expect(item.contains("2026-11-20 16:15 UTC+8"))
            #expect(item.contains("<option value=\"moved\" selected>转移 — 把道具转到付款玩家的账号</option>"))
            for label in Self.englishLabels { #expect(!item.contains(label), "English left on the item: \(label)") }
        }
    }

    @Test func theSwitchIsRememberedInTheSession() async throws {
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let english = try await Self.get(client, "/", cookie: cookie)
            #expect(english.contains("<h1>Review queue</h1>"))
            #expect(english.contains("href=\"/?lang=zh-Hans\""))
            #expect(try await Self.get(client, "/?lang=zh-Hans", cookie: cookie).contains("<h1>待处理列表</h1>"))
            // Remembered: no query, and a browser that asks for English.
            let runs = try await Self.get(client, "/runs", cookie: cookie, language: "en")
            #expect(runs.contains("<h1>对账记录</h1>"))
            #expect(try await Self.get(client, "/?lang=en", cookie: cookie).contains("<h1>Review queue</h1>"))
            #expect(try await Self.get(client, "/runs", cookie: cookie).contains("<h1>Runs</h1>"))
        }
    }

    /// The Insights page in both languages: its headings, the trends' charts and tables, and no
    /// English label left on the Chinese page.
    @Test func theInsightsPageIsInBothLanguages() async throws {
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            let english = try await Self.get(client, "/insights?lang=en", cookie: cookie)
            #expect(english.contains("<h1>Where orders leak</h1>"))
            #expect(english.contains("<h2>New findings per night</h2>"))
            #expect(english.contains(#"class="trend-chart""#) && english.contains(#"<table id="trend-open-table">"#))
            let chinese = try await Self.get(client, "/insights?lang=zh-Hans", cookie: cookie)
            #expect(chinese.contains("<h1>漏单在哪里</h1>"))
            #expect(chinese.contains("<h2>每夜新增问题</h2>"))
            for label in Self.englishLabels + ["Where orders leak", "New findings per night", "Trends", "The numbers"] {
                #expect(!chinese.contains(label), "English left on the Insights page: \(label)")
            }
        }
    }

    @Test func theTimeZoneChoiceIsRememberedAndDefaultsByLanguage() async throws {
        let item = try #require(ids["t-m1"])
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            #expect(try await Self.get(client, "/items/\(item)", cookie: cookie).contains("2026-11-20 08:15 UTC"))
            let shanghai = try await Self.get(client, "/items/\(item)?tz=Asia/Shanghai", cookie: cookie)
            #expect(shanghai.contains("2026-11-20 16:15 UTC+8"))
            #expect(shanghai.contains("<option value=\"Asia/Shanghai\" selected>"))
            #expect(try await Self.get(client, "/items/\(item)", cookie: cookie).contains("2026-11-20 16:15 UTC+8"))
            // A zone that is not offered is ignored.
            #expect(try await Self.get(client, "/items/\(item)?tz=Mars/Olympus", cookie: cookie).contains("16:15 UTC+8"))
        }
    }

    @Test func theLoginPageSwitchesBeforeLoginAndTheChoiceFollowsIntoTheSession() async throws {
        try await withApp { client in
            let login = try await Self.get(client, "/login?lang=zh-Hans&next=/runs")
            #expect(login.contains("<html lang=\"zh-Hans\">"))
            #expect(login.contains("请用团队口令登录"))
            #expect(login.contains("<input type=\"hidden\" name=\"lang\" value=\"zh-Hans\">"))
            #expect(!login.contains("Log in"))
            let refused = try await client.execute(
                uri: "/login", method: .post, headers: ReviewWebTests.form,
                body: ReviewWebTests.encode([("name", "mei"), ("token", "wrong"), ("lang", "zh-Hans")]))
            #expect(refused.status == .unauthorized)
            #expect(String(buffer: refused.body).contains("口令不对。"))
            let response = try await client.execute(
                uri: "/login", method: .post, headers: ReviewWebTests.form,
                body: ReviewWebTests.encode([("name", "mei"), ("token", ReviewWebTests.token), ("lang", "zh-Hans")]))
            let cookie = String(try #require(response.headers[.setCookie]?.split(separator: ";").first))
            #expect(try await Self.get(client, "/", cookie: cookie).contains("<h1>待处理列表</h1>"))
        }
    }

    @Test func refusalsAndMessagesComeFromTheCatalog() async throws {
        let item = try #require(ids["t-d1"])
        try await withApp { client in
            let cookie = try await ReviewWebTests.login(client)
            _ = try await Self.get(client, "/?lang=zh-Hans", cookie: cookie)
            let csrf = try await ReviewWebTests.csrf(client, cookie: cookie)
            let empty = try await ReviewWebTests.post(client, "/items/\(item)/dismiss", cookie: cookie, [("csrf_token", csrf)])
            #expect(empty.status == .badRequest)
            #expect(String(buffer: empty.body).contains("请填写备注，说明原因。"))
            let dismissed = try await ReviewWebTests.post(
                client, "/items/\(item)/dismiss", cookie: cookie, [("csrf_token", csrf), ("note", "测试账号")])
            #expect(dismissed.status == .seeOther)
            #expect(try await Self.get(client, "/items/\(item)", cookie: cookie).contains("已忽略问题单 \(item)。"))
            let refused = try await ReviewWebTests.post(
                client, "/items/\(item)/resolve", cookie: cookie, [("csrf_token", csrf), ("resolution", "revoked")])
            #expect(refused.status == .conflict)
            #expect(String(buffer: refused.body).contains("问题单 \(item) 已由 alice 忽略，处理结果不能更改。"))
        }
    }

    // MARK: Templates and catalogs

    @Test func everyKeyATemplateUsesIsInBothCatalogs() throws {
        let keys = Templates.catalogKeys()
        #expect(keys.count > 50, "the templates should take their words from the catalog")
        for language in Language.allCases {
            let catalog = Catalog.of(language)
            for key in keys.sorted() {
                #expect(catalog.strings[key] != nil, "\(language.rawValue) lacks \(key), used by a template")
            }
        }
    }

    @Test func templatesHoldNoWords() throws {
        for (name, text) in Templates.sources {
            var visible = text.replacing(/\{\{[^}]*\}\}/, with: " ")
            visible = visible.replacing(/<[^>]*>/, with: " ")
            let words = visible.matches(of: /[A-Za-z\p{Han}]{2,}/).map { String($0.output) }
            #expect(words.isEmpty, "\(name).mustache holds words outside the catalog: \(words)")
        }
    }

    @Test func everyTemplateIsEmbedded() throws {
        #expect(Set(Templates.sources.map(\.name)) == ["layout", "login", "queue", "item", "runs", "error", "desk", "refund_requests", "bulk", "insights"])
        #expect(Templates.css.contains(".chip"))
        // The one stylesheet: the one report.html embeds, severity colours included.
        #expect(Templates.css == Stylesheet.css && Templates.css.contains(".sev-high{--sev:"))
    }

    @Test func aMissingTemplateIsA500NotAnEmptyPage() throws {
        let response = Pages.response(
            library: MustacheLibrary(), template: "queue", ErrorPage(heading: "h", message: "m"), status: .ok,
            logger: Logger(label: "test")
        ) { "the failure page" }
        #expect(response.status == .internalServerError)
        let library = try Templates.library()
        let rendered = Pages.response(
            library: library, template: "no-such-template", "x", status: .ok, logger: Logger(label: "test")
        ) { "the failure page" }
        #expect(rendered.status == .internalServerError)
    }
}
