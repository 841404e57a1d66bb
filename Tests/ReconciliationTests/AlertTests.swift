import Foundation
import Hummingbird
import Logging
import Postgres
@testable import Reconciliation
import Synchronization
import TestSupport
import Testing

/// Alerts after every run (SPEC section 19, issue 39 item 3): the rules on what is new since the
/// previous check, each platform's own body and signature, and the durable queue against a local
/// webhook that answers, refuses, redirects or stalls.
@Suite("Alerts: rules, formats, signatures and the queue")
struct AlertTests {
    static let quiet = Logger(label: "alerts", factory: { _ in SwiftLogNoOpLogHandler() })

    // MARK: Signatures

    /// Feishu's custom-bot signature, against a value computed independently of this code:
    /// `python3 -c "import hmac,hashlib,base64; ts='1599360473'; s='demo-secret-of-a-feishu-bot';
    /// print(base64.b64encode(hmac.new((ts+'\n'+s).encode(), b'', hashlib.sha256).digest()).decode())"`
    /// (the algorithm of Feishu's SignDemo: the string to sign is the HMAC's key, its message empty).
    @Test func feishuSignsWithTheTimestampAndSecretAsTheKeyOverNothing() {
        #expect(AlertFormat.feishuSignature(timestamp: "1599360473", secret: "demo-secret-of-a-feishu-bot")
            == "2Ii5Qxy/ppC3schm1e2dv40sk+LWUQjsodQMew9YOME=")
        #expect(AlertFormat.feishuSignature(timestamp: "1599360474", secret: "demo-secret-of-a-feishu-bot")
            != "2Ii5Qxy/ppC3schm1e2dv40sk+LWUQjsodQMew9YOME=")
    }

    /// DingTalk's robot signature, against DingTalk's own Python sample run on these values:
    /// `hmac.new(secret.encode(), (ts+'\n'+secret).encode(), hashlib.sha256)`, base64, then
    /// `urllib.parse.quote_plus` for the query.
    @Test func dingTalkSignsTheTimestampAndSecretWithTheSecret() throws {
        let secret = "SEC1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcd"
        #expect(AlertFormat.dingTalkSignature(timestamp: "1577262236757", secret: secret)
            == "7Wjr6SxFEAFFkMYWtwlh/bafzduS/phDQH19YYhoz5M=")
        let (url, _) = try AlertFormat.dingtalk.request(
            Self.message(), url: "https://oapi.dingtalk.com/robot/send?access_token=abc", secret: Secret(secret),
            now: Date(timeIntervalSince1970: 1_577_262_236.757))
        #expect(url == "https://oapi.dingtalk.com/robot/send?access_token=abc&timestamp=1577262236757"
            + "&sign=7Wjr6SxFEAFFkMYWtwlh%2FbafzduS%2FphDQH19YYhoz5M%3D")
    }

    // MARK: Bodies

    static func message(language: Language = .english, link: Bool = true) -> AlertMessage {
        AlertMessage(
            runID: 42,
            fired: [
                FiredAlert(rule: .newHighFindings, count: 3),
                FiredAlert(rule: .valueAtRisk, currency: "CNY", amountMilli: 6_480_000, previousMilli: 30_000),
                FiredAlert(rule: .flaggedSegment, count: 1, segments: ["app_version=4.2.0"]),
            ],
            reader: Reader(language: language, timeZone: .gmt), publicURL: link ? "https://reconcile.example.com" : nil)
    }

    static func object(_ body: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    }

    /// Each platform's own incoming-webhook body, as its documentation's example has it.
    @Test func eachFormatIsThePlatformsOwnBody() throws {
        let message = Self.message()
        let now = Date(timeIntervalSince1970: 1_599_360_473)
        // Slack: {"text": …} in mrkdwn, the link as <url|text> (api.slack.com/messaging/webhooks).
        let slack = try Self.object(AlertFormat.slack.request(message, url: "https://hooks.slack.com/services/T/B/X",
                                                               secret: nil, now: now).body)
        #expect(Array(slack.keys) == ["text"])
        #expect(slack["text"] as? String == """
            *iap-reconcile: run 42 needs a look*
            • 3 new high-severity findings
            • Value at risk in the queue: CN¥6,480.00 (was CN¥30.00)
            • Newly flagged, leaking far above the rest: app_version=4.2.0
            <https://reconcile.example.com/runs/42/report|Open the report>
            """)
        // Feishu: {"msg_type": "text", "content": {"text"}}, with timestamp (seconds) and sign when signed.
        let feishu = try Self.object(AlertFormat.feishu.request(
            message, url: "https://open.feishu.cn/open-apis/bot/v2/hook/x", secret: Secret("demo-secret-of-a-feishu-bot"),
            now: now).body)
        #expect(Set(feishu.keys) == ["msg_type", "content", "timestamp", "sign"])
        #expect(feishu["msg_type"] as? String == "text")
        #expect(feishu["timestamp"] as? String == "1599360473")
        #expect(feishu["sign"] as? String == "2Ii5Qxy/ppC3schm1e2dv40sk+LWUQjsodQMew9YOME=")
        #expect((feishu["content"] as? [String: String])?["text"]?.hasPrefix("iap-reconcile: run 42 needs a look\n• 3 new") == true)
        let unsigned = try Self.object(AlertFormat.feishu.request(message, url: "https://x.example", secret: nil, now: now).body)
        #expect(Set(unsigned.keys) == ["msg_type", "content"])
        // DingTalk: {"msgtype": "markdown", "markdown": {"title", "text"}}.
        let ding = try Self.object(AlertFormat.dingtalk.request(message, url: "https://x.example/robot/send?access_token=t",
                                                                 secret: nil, now: now).body)
        #expect(ding["msgtype"] as? String == "markdown")
        let dingMarkdown = try #require(ding["markdown"] as? [String: String])
        #expect(dingMarkdown["title"] == "iap-reconcile: run 42 needs a look")
        #expect(dingMarkdown["text"]?.hasPrefix("### iap-reconcile: run 42 needs a look\n\n- 3 new high-severity findings\n") == true)
        #expect(dingMarkdown["text"]?.hasSuffix("\n\n[Open the report](https://reconcile.example.com/runs/42/report)") == true)
        // WeCom: {"msgtype": "markdown", "markdown": {"content"}} (developer.work.weixin.qq.com, group robot).
        let wecom = try Self.object(AlertFormat.wecom.request(message, url: "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k",
                                                               secret: nil, now: now).body)
        #expect(Set(wecom.keys) == ["msgtype", "markdown"])
        #expect((wecom["markdown"] as? [String: String])?["content"]?.hasPrefix("**iap-reconcile: run 42 needs a look**\n\n- 3") == true)
        // The job's own: the run, the rules that fired with their numbers, the link.
        let json = try Self.object(AlertFormat.json.request(message, url: "https://x.example", secret: nil, now: now).body)
        #expect(json["run_id"] as? Int == 42)
        #expect(json["report_url"] as? String == "https://reconcile.example.com/runs/42/report")
        let fired = try #require(json["fired"] as? [[String: Any]])
        #expect(fired.map { $0["rule"] as? String } == ["new_high_findings", "value_at_risk", "flagged_segment"])
        #expect(fired[1]["amount_milli"] as? Int == 6_480_000)
    }

    /// The staff's language, every word from the catalog; Slack's control characters escaped.
    @Test func theMessageIsInTheStaffsLanguage() throws {
        let message = Self.message(language: .simplifiedChinese, link: false)
        #expect(message.title == "iap-reconcile：第 42 次运行需要关注")
        #expect(message.lines[0] == "新增 3 条高严重度问题")
        #expect(message.link == nil)
        #expect(!message.plainText.contains("Open the report"))
        #expect(AlertMessage.slackEscaped("a <b> & c") == "a &lt;b&gt; &amp; c")
    }

    /// Every run's message ends with the counts, the value at risk (unless a rule said it) and
    /// the top flagged segment; the json format carries them as numbers.
    @Test func aRunsMessageEndsWithTheCountsTheValueAtRiskAndTheTopSegment() throws {
        let summary = AlertMessage.Summary(
            openItems: 12, newFindings: 3, valueAtRisk: ["CNY": 6_480_000, "USD": 990_000],
            topSegment: RunAlerts.FlaggedSegment(name: "app_version=4.3.0", leaks: 11, purchases: 14))
        let reader = Reader(language: .english, timeZone: .gmt)
        let message = AlertMessage(
            runID: 7, fired: [FiredAlert(rule: .newHighFindings, count: 3)], summary: summary, reader: reader,
            publicURL: nil)
        #expect(message.lines == [
            "3 new high-severity findings", "12 items open in the queue, 3 of them new",
            "Value at risk in the queue: \(reader.money(milli: 6_480_000, currency: "CNY")), "
                + reader.money(milli: 990_000, currency: "USD"),
            "Top flagged segment: app_version=4.3.0, 11 of its 14 purchases leaked",
        ])
        let saidByItsRule = AlertMessage(
            runID: 7, fired: [FiredAlert(rule: .valueAtRisk, currency: "CNY", amountMilli: 6_480_000)], summary: summary,
            reader: reader, publicURL: nil)
        #expect(saidByItsRule.lines.filter { $0.hasPrefix("Value at risk") }.count == 1)
        let json = try Self.object(AlertFormat.json.request(message, url: "https://x.example", secret: nil, now: Date()).body)
        let numbers = try #require(json["summary"] as? [String: Any])
        #expect(numbers["open_items"] as? Int == 12 && numbers["new_findings"] as? Int == 3)
        #expect((numbers["top_segment"] as? [String: Any])?["leaks"] as? Int == 11)
        #expect((numbers["value_at_risk"] as? [String: Int])?["CNY"] == 6_480_000)
        let chinese = AlertMessage(
            runID: 7, fired: [], summary: summary, reader: Reader(language: .simplifiedChinese), publicURL: nil)
        #expect(chinese.lines.first == "待处理队列中共 12 条，其中新增 3 条")
    }

    // MARK: Rules

    @Test func aRuleFiresOnWhatIsNewSinceThePreviousCheck() {
        var rules = AlertRules.defaults
        rules.valueAtRisk = ["CNY": 100_000]
        rules.uploadsRetryShare = 0.1
        var first = AlertMeasures()
        first.newHighFindings = 2
        first.valueAtRisk = ["CNY": 150_000, "USD": 9_000_000]
        first.flaggedSegments = ["app_version=4.2.0"]
        first.uploads = 10
        first.uploadsRetry = 2
        #expect(rules.fired(first, since: nil).map(\.rule) == [
            .newHighFindings, .valueAtRisk, .flaggedSegment, .uploadsRetry,
        ])
        // The same state a night later: the value did not grow, the segment stays flagged, the
        // retries did not grow, and nothing new was opened: nothing is sent again.
        var second = first
        second.newHighFindings = 0
        #expect(rules.fired(second, since: first).isEmpty)
        // It grows, a second segment is flagged, Google refunds an unacknowledged purchase.
        var third = second
        third.valueAtRisk["CNY"] = 160_000
        third.flaggedSegments = ["app_version=4.2.0", "os_version=17.5"]
        third.unacknowledgedVoids = 1
        let fired = rules.fired(third, since: second)
        #expect(fired.map(\.rule) == [.valueAtRisk, .flaggedSegment, .unacknowledgedVoids])
        #expect(fired[0].previousMilli == 150_000)
        #expect(fired[1].segments == ["os_version=17.5"])
        // Below the threshold nothing fires, however it grows.
        var low = AlertMeasures()
        low.valueAtRisk = ["CNY": 99_999]
        #expect(rules.fired(low, since: nil).isEmpty)
        // No rules at all (an empty alerts section): nothing, whatever happened.
        #expect(AlertRules().fired(third, since: nil).isEmpty)
    }

    @Test func thePolicyFilesAlertsSectionIsValidated() throws {
        let file = try PolicyFile.parse("""
            alerts:
              new_high_findings: 5
              value_at_risk: {CNY: 5000, USD: 700}
              flagged_segment: false
              uploads_retry: 0.05
            """)
        #expect(file.rules.isEmpty)
        #expect(file.alerts == AlertRules(
            newHighFindings: 5, valueAtRisk: ["CNY": 5_000_000, "USD": 700_000], flaggedSegment: false,
            uploadsRetryShare: 0.05))
        #expect(try PolicyFile.parse("alerts: {}").alerts == AlertRules())
        for (text, line, key) in [
            ("alerts:\n  new_high: 1\n", 2, "alerts.new_high"),
            ("alerts:\n  uploads_retry: 5\n", 2, "alerts.uploads_retry"),
            ("alerts:\n  new_high_findings: 0\n", 2, "alerts.new_high_findings"),
            ("alerts:\n  value_at_risk: {CNY: -1}\n", 2, "alerts.value_at_risk.CNY"),
            ("alerts:\n  flagged_segment: maybe\n", 2, "alerts.flagged_segment"),
        ] {
            #expect {
                try PolicyFile.parse(text)
            } throws: { error in
                guard let error = error as? PolicyFileError else { return false }
                return error.line == line && error.key == key
            }
        }
        #expect(throws: PolicyFileError.self) { try PolicyFile.parse("other: 1\n") }
    }

    // MARK: The queue against a local webhook

    /// A webhook whose answer the test sets: a status, a redirect, or a stall.
    final class Hook: Sendable {
        enum Answer: Sendable { case status(Int), redirect, stall }
        let answer = Mutex(Answer.status(200))
        let received = Mutex<[(path: String, query: String, body: String)]>([])
        var bodies: [String] { received.withLock { $0.map(\.body) } }

        var router: Router<BasicRequestContext> {
            let router = Router(context: BasicRequestContext.self)
            router.post("hook") { request, _ -> Response in
                let body = String(buffer: try await request.body.collect(upTo: 1 << 20))
                self.received.withLock { $0.append((request.uri.path, request.uri.query ?? "", body)) }
                switch self.answer.withLock({ $0 }) {
                case .status(let code): return Response(status: .init(code: code))
                case .redirect:
                    return Response(status: .found, headers: [.location: "/elsewhere"])
                case .stall:
                    try await Task.sleep(for: .seconds(5))
                    return Response(status: .ok)
                }
            }
            router.post("elsewhere") { request, _ -> Response in
                self.received.withLock { $0.append((request.uri.path, "", "")) }
                return Response(status: .ok)
            }
            return router
        }
    }

    static func settings(_ database: TestDatabase, hook port: Int, format: String, secret: String?) throws -> Settings {
        var values = [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
            "GOOGLE_PLAY_PACKAGE_NAMES": PlayUploadScenarioTests.package,
            "GOOGLE_PLAY_LICENSE_KEYS": key.setting,
            "RECONCILE_REPORT_DIR": Scratch.folder("alert-reports").path,
            "RECONCILE_RECEIPT_VERIFICATION": "local",
            "RECONCILE_ALERT_WEBHOOK_URL": "http://127.0.0.1:\(port)/hook?access_token=tok-in-the-url",
            "RECONCILE_ALERT_FORMAT": format, "RECONCILE_PUBLIC_URL": "https://reconcile.example.com/",
        ]
        values["RECONCILE_ALERT_SECRET"] = secret
        return try Settings(lookup: values.lookup)
    }

    static let key = PlayUploadScenarioTests.LicenceKey()

    /// A paid Play purchase uploaded by `user` and never credited: a new missed_delivery (high).
    static func plantMissedPurchase(_ n: Int, user: String, on connection: Connection) throws {
        let bought = Date().addingTimeInterval(-2 * 86_400)
        let order = "GPA.3000-0000-0000-\(String(format: "%05d", n))"
        let data = PlayUploadScenarioTests.purchaseData(order: order, token: "tok-\(n)", account: user, bought: bought)
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
            VALUES ($1, 'play_purchase', $2, $3, $4)
            """, [user, try key.payload(data), order, bought])
    }

    static func run(_ settings: Settings) async throws -> RunReport {
        try await Stores.withJob(settings: settings, logger: quiet) { job in
            try await job.run(.init(since: Date().addingTimeInterval(-5 * 86_400)))
        }
    }

    func unsent(_ connection: Connection) throws -> [String] {
        try connection.query(
            "SELECT coalesce(last_error, '-') FROM reconcile.alerts WHERE sent_at IS NULL ORDER BY id"
        ).map { try $0.decode(String.self, at: 0) }
    }

    /// A run that opens a high finding sends one signed DingTalk message; a run with nothing new
    /// sends nothing; a webhook that refuses leaves the alert queued, the run unharmed, and the next
    /// run sends it.
    @Test func aRunsAlertReachesTheWebhookOnceAndWaitsOutAnOutage() async throws {
        let (database, connection) = try TestDatabase.migrated("alerts_queue")
        try connection.executeScript("INSERT INTO reconcile.products VALUES ('coin42', 'consumable', 6000, 'CNY');")
        let hook = Hook()
        try await WebhookServer.run(hook.router) { port in
            let secret = "SEC0123456789abcdef0123456789abcdef"
            let settings = try Self.settings(database, hook: port, format: "dingtalk", secret: secret)
            try Self.plantMissedPurchase(1, user: "alice", on: connection)
            let first = try await Self.run(settings)
            #expect(first.newFindings == 1)
            let sent = try #require(try await AlertDelivery.deliverIfConfigured(settings: settings, logger: Self.quiet))
            #expect(sent == .init(sent: 1, failed: 0))
            let (path, query, body) = try #require(hook.received.withLock { $0.first })
            #expect(path == "/hook")
            // The signature in the query verifies with the secret and the query's own timestamp.
            let fields = Dictionary(uniqueKeysWithValues: query.split(separator: "&").map {
                let pair = $0.split(separator: "=", maxSplits: 1)
                return (String(pair[0]), String(pair[1]).removingPercentEncoding ?? "")
            })
            #expect(fields["access_token"] == "tok-in-the-url")
            let timestamp = try #require(fields["timestamp"])
            #expect(fields["sign"] == AlertFormat.dingTalkSignature(timestamp: timestamp, secret: secret))
            let markdown = try #require(try Self.object(Data(body.utf8))["markdown"] as? [String: String])
            #expect(markdown["title"] == "iap-reconcile: run \(first.runID) needs a look")
            #expect(markdown["text"]?.contains("- 1 new high-severity findings") == true)
            #expect(markdown["text"]?.contains("(https://reconcile.example.com/runs/\(first.runID)/report)") == true)

            // Nothing new: no message.
            _ = try await Self.run(settings)
            #expect(try await AlertDelivery.deliverIfConfigured(settings: settings, logger: Self.quiet) == .init())
            #expect(hook.bodies.count == 1)

            // The chat refuses: the run completes, its alert waits with the reason.
            hook.answer.withLock { $0 = .status(500) }
            try Self.plantMissedPurchase(2, user: "bob", on: connection)
            let third = try await Self.run(settings)
            #expect(third.status == .completed)
            var delivery = try #require(AlertDelivery(settings: settings, logger: Self.quiet))
            delivery.backoff = .milliseconds(10)
            let refused = try await delivery.deliver(on: connection)
            #expect(refused.sent == 0 && refused.failed == 1 && refused.lastError == "HTTP 500")
            #expect(try unsent(connection) == ["HTTP 500"])
            #expect(hook.bodies.count == 1 + delivery.attempts)

            // Back up: the next run (nothing new of its own) sends the waiting alert.
            hook.answer.withLock { $0 = .status(200) }
            _ = try await Self.run(settings)
            #expect(try await delivery.deliver(on: connection) == .init(sent: 1, failed: 0))
            #expect(try unsent(connection).isEmpty)
            #expect(hook.bodies.last?.contains("run \(third.runID) needs a look") == true)
            // The URL's token never reaches the queue's errors or the kept messages.
            let kept = try connection.query("SELECT message::text || coalesce(last_error, '') FROM reconcile.alerts")
                .map { try $0.decode(String.self, at: 0) }.joined()
            #expect(!kept.contains("tok-in-the-url"))
        }
    }

    /// A redirect is not followed and a stalled answer is cut off at the deadline: the alert stays
    /// queued with why, and nothing else changes.
    @Test func aRedirectingOrStalledWebhookOnlyLeavesTheAlertQueued() async throws {
        let (database, connection) = try TestDatabase.migrated("alerts_hostile")
        let hook = Hook()
        try await WebhookServer.run(hook.router) { port in
            let settings = try Self.settings(database, hook: port, format: "slack", secret: nil)
            _ = try RunAlerts.queueTest(settings: settings, on: connection)
            var delivery = try #require(AlertDelivery(settings: settings, logger: Self.quiet))
            delivery.attempts = 1
            hook.answer.withLock { $0 = .redirect }
            #expect(try await delivery.deliver(on: connection) == .init(sent: 0, failed: 1, lastError: "HTTP 302"))
            #expect(hook.received.withLock { $0.map(\.path) } == ["/hook"])
            hook.answer.withLock { $0 = .stall }
            delivery.timeout = .milliseconds(500)
            let stalled = try await delivery.deliver(on: connection)
            #expect(stalled.failed == 1 && stalled.lastError?.hasPrefix("no whole answer within") == true)
            #expect(try unsent(connection).count == 1)
            hook.answer.withLock { $0 = .status(204) }
            // A generous deadline again: on a loaded machine a quick 204 can take longer than the
            // half second that cut the stall off.
            delivery.timeout = .seconds(30)
            let taken = try await delivery.deliver(on: connection)
            #expect(taken.sent == 1, "\(taken)")
            let text = try #require(try Self.object(Data((hook.bodies.last ?? "").utf8))["text"] as? String)
            #expect(text.hasPrefix("*iap-reconcile: test alert*"))
            #expect(text.contains("<https://reconcile.example.com/runs|Open the review pages>"))
        }
    }

    /// `reconcile check --alert-test` through the real binary: the test message reaches the
    /// webhook in the configured format, and the check's line says so; with the webhook refusing,
    /// the line says why and the check fails.
    @Test func checkSendsATestMessage() async throws {
        let (database, _) = try TestDatabase.migrated("alerts_check")
        let hook = Hook()
        try await WebhookServer.run(hook.router) { port in
            func check() async throws -> (status: Int32, out: String) {
                let child = try ChildProcess(
                    try ChildProcess.executable("reconcile"), arguments: ["check", "--alert-test", "--log-level", "error"],
                    environment: [
                        "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.hncs.szj",
                        "RECONCILE_RECEIPT_VERIFICATION": "local",
                        "RECONCILE_ALERT_WEBHOOK_URL": "http://127.0.0.1:\(port)/hook?key=tok-in-the-url",
                        "RECONCILE_ALERT_FORMAT": "wecom", "RECONCILE_LANGUAGE": "zh-Hans",
                    ],
                    logDirectory: Scratch.folder("alerts-check"), label: "check")
                return (try await child.waitForExit(), child.standardOutput)
            }
            let sent = try await check()
            #expect(sent.out.contains("pass alert test: sent (wecom)"), "\(sent.out)")
            let body = try Self.object(Data(try #require(hook.bodies.first).utf8))
            #expect(body["msgtype"] as? String == "markdown")
            #expect((body["markdown"] as? [String: String])?["content"]?.hasPrefix("**iap-reconcile：测试告警**") == true)
            hook.answer.withLock { $0 = .status(403) }
            let refused = try await check()
            #expect(refused.status == 1)
            #expect(refused.out.contains("FAIL alert test: not sent: HTTP 403"), "\(refused.out)")
            #expect(!refused.out.contains("tok-in-the-url"))
        }
    }

    /// The settings refuse what cannot work, without showing the URL.
    @Test func theSettingsRefuseWhatCannotWork() {
        func refusal(_ values: [String: String]) -> SettingsError? {
            var all = ["DATABASE_URL": "postgres://x@localhost/x", "RECONCILE_BUNDLE_IDS": "com.x"]
            all.merge(values) { $1 }
            do { _ = try Settings(lookup: all.lookup); return nil } catch { return error }
        }
        #expect(refusal(["RECONCILE_ALERT_WEBHOOK_URL": "ftp://secret-token@x"])?.key == "RECONCILE_ALERT_WEBHOOK_URL")
        #expect(refusal(["RECONCILE_ALERT_WEBHOOK_URL": "ftp://secret-token@x"]).map { "\($0)" }?.contains("secret-token") == false)
        #expect(refusal(["RECONCILE_ALERT_WEBHOOK_URL": "https://x", "RECONCILE_ALERT_FORMAT": "teams"])?.key
            == "RECONCILE_ALERT_FORMAT")
        // Nothing SPEC section 19 calls an error: a secret beside a format that signs nothing is
        // ignored, a format or secret without a URL leaves alerts off.
        #expect(refusal(["RECONCILE_ALERT_WEBHOOK_URL": "https://x", "RECONCILE_ALERT_SECRET": "s"]) == nil)
        #expect(refusal(["RECONCILE_ALERT_WEBHOOK_URL": "https://x", "RECONCILE_ALERT_FORMAT": "slack",
                         "RECONCILE_ALERT_SECRET": "s"]) == nil)
        #expect(refusal(["RECONCILE_ALERT_FORMAT": "slack"]) == nil)
        #expect(refusal(["RECONCILE_ALERT_FORMAT": "dingtalk", "RECONCILE_ALERT_SECRET": "s"]) == nil)
        #expect(refusal(["RECONCILE_ALERT_WEBHOOK_URL": "https://x", "RECONCILE_ALERT_FORMAT": "feishu",
                         "RECONCILE_ALERT_SECRET": "s"]) == nil)
        #expect(Settings.secretKeys.contains("RECONCILE_ALERT_WEBHOOK_URL"))
    }

    /// A secret set beside a format that signs nothing changes nothing in its request; without a
    /// URL there are no alerts.
    @Test func aSecretSignsOnlyTheFormatsThatSign() throws {
        let message = Self.message()
        for format in AlertFormat.allCases where !format.isSigned {
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let signed = try format.request(message, url: "https://hooks.example/x", secret: Secret("s"), now: now)
            let plain = try format.request(message, url: "https://hooks.example/x", secret: nil, now: now)
            #expect(signed.url == plain.url && signed.body == plain.body, "\(format)")
        }
        let settings = try Settings(lookup: [
            "DATABASE_URL": "postgres://x@localhost/x", "RECONCILE_BUNDLE_IDS": "com.x",
            "RECONCILE_ALERT_FORMAT": "feishu", "RECONCILE_ALERT_SECRET": "s",
        ].lookup)
        #expect(!settings.alerts.enabled)
    }
}
