import Foundation
import Reconciliation
import Testing

@Suite("Settings")
struct SettingsTests {
    func settings(_ values: [String: String], requireBundleIDs: Bool = true) throws(SettingsError) -> Settings {
        try Settings(lookup: { values[$0] }, requireBundleIDs: requireBundleIDs)
    }

    @Test func defaultsFollowTheSpec() throws {
        let settings = try settings(["RECONCILE_BUNDLE_IDS": "com.hncs.szj, com.hncs.szj.lite"])
        #expect(settings.bundleIDs == ["com.hncs.szj", "com.hncs.szj.lite"])
        #expect(settings.environment == .production)
        #expect(settings.grace == 1800)
        #expect(settings.receiptVerification == .apple)
        #expect(settings.maxAttempts == 5)
        #expect(settings.appleTimeout == 30)
        #expect(settings.concurrency == 16)
        #expect(settings.reportDirectory == "./reports")
        #expect(settings.verifyReceiptURL == "https://buy.itunes.apple.com/verifyReceipt")
        #expect(settings.uploadsRelation.sql == "\"reconcile\".\"receipt_uploads\"")
        #expect(settings.deliveriesRelation.sql == "\"reconcile\".\"deliveries\"")
        #expect(settings.serverAPIKey == nil)
        #expect(settings.databaseURL == nil)
    }

    @Test func bundleIDsAreRequiredForTheRun() {
        #expect(throws: SettingsError(
            key: "RECONCILE_BUNDLE_IDS", problem: "is required: the app's bundle ids, comma-separated")
        ) { try settings([:]) }
        #expect(throws: Never.self) { try settings([:], requireBundleIDs: false) }
    }

    @Test(arguments: [
        ("RECONCILE_ENVIRONMENT", "staging"),
        ("RECONCILE_GRACE", "soon"),
        ("RECONCILE_RECEIPT_VERIFICATION", "maybe"),
        ("RECONCILE_MAX_ATTEMPTS", "0"),
        ("RECONCILE_APPLE_TIMEOUT", "never"),
        ("RECONCILE_CONCURRENCY", "-3"),
        ("APPLE_VERIFY_RECEIPT_URL", "ftp://example.com"),
        ("APPSTORE_API_RATE", "fast"),
        ("RECONCILE_DELIVERIES_RELATION", "ledger; DROP TABLE users"),
        ("APPSTORE_KEY_ID", "ABC123"),
    ])
    func rejectsBadValuesNamingTheVariable(_ key: String, _ value: String) {
        let error = #expect(throws: SettingsError.self) {
            try settings(["RECONCILE_BUNDLE_IDS": "com.example", key: value])
        }
        #expect(error?.key == key)
        #expect(error.map { !$0.description.contains(value) } ?? false, "the message must not echo the value")
    }

    @Test func secretsPrintRedacted() throws {
        let settings = try settings(["RECONCILE_BUNDLE_IDS": "com.example", "APPLE_SHARED_SECRET": "0123abcd-shh"])
        #expect(settings.sharedSecret?.value == "0123abcd-shh")
        #expect(!"\(settings)".contains("0123abcd-shh"))
        #expect(!String(reflecting: settings).contains("0123abcd-shh"))
    }

    @Test func serverAPIKeyNeedsAllThreeParts() throws {
        let settings = try settings([
            "RECONCILE_BUNDLE_IDS": "com.example", "APPSTORE_KEY_ID": "K", "APPSTORE_ISSUER_ID": "I",
            "APPSTORE_PRIVATE_KEY_FILE": "/keys/AuthKey_K.p8", "RECONCILE_ENVIRONMENT": "Sandbox",
            "RECONCILE_GRACE": "2h",
        ])
        #expect(settings.serverAPIKey?.keyID == "K")
        #expect(settings.environment == .sandbox)
        #expect(settings.grace == 7200)
    }
}

@Suite("Time expressions")
struct TimeExpressionTests {
    let now = Date(timeIntervalSince1970: 1_795_312_800)  // 2026-11-22T02:00:00Z

    @Test(arguments: [
        ("2026-11-01", 1_793_491_200.0),
        ("2026-11-01T02:00:00Z", 1_793_498_400.0),
        ("2026-11-01T10:00:00+08:00", 1_793_498_400.0),
        ("2026-11-01T02:00:00.500Z", 1_793_498_400.5),
        ("36h", 1_795_312_800.0 - 129_600),
        ("7d", 1_795_312_800.0 - 604_800),
        ("90m", 1_795_312_800.0 - 5400),
    ])
    func parsesInstants(_ text: String, _ seconds: Double) throws {
        let instant = try #require(TimeExpression.instant(text, now: now))
        #expect(abs(instant.timeIntervalSince1970 - seconds) < 0.001)
    }

    @Test(arguments: ["", "yesterday", "2026-11", "2026-13-01", "7x", "-5d", "2026-11-01 02:00"])
    func rejectsWhatIsNotATime(_ text: String) {
        #expect(TimeExpression.instant(text, now: now) == nil)
    }

    @Test func formatsRFC3339() {
        #expect(TimeExpression.format(now) == "2026-11-22T02:00:00Z")
    }

    /// Issue 24 item 13: the webhook's signing key is at least 16 characters, like the web token.
    @Test(arguments: [("x", false), ("fifteen-chars-x", false), ("sixteen-chars-xx", true)])
    func aWebhookSecretNeedsSixteenCharacters(secret: String, accepted: Bool) {
        let values = [
            "RECONCILE_BUNDLE_IDS": "com.example", "RECONCILE_OUTBOX_WEBHOOK_URL": "https://app.example/hook",
            "RECONCILE_OUTBOX_WEBHOOK_SECRET": secret,
        ]
        let settings = try? Settings(lookup: { values[$0] })
        #expect((settings != nil) == accepted)
    }
}
