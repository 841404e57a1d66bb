import Foundation
import AppStore
import Postgres

/// The job's configuration (SPEC section 9), read from one key → value lookup (environment over
/// config file, assembled by the executable) and validated once.
public struct Settings: Sendable {
    /// Which purchases count as real money.
    public enum Environment: String, Sendable, CaseIterable, PostgresNonNullDecodable {
        /// Production purchases count; sandbox ones are testers'.
        case production
        /// Sandbox purchases count (a staging deployment).
        case sandbox

        /// Apple's environment whose purchases count: the one mapping from the setting.
        public var apple: AppStoreEnvironment { self == .production ? .production : .sandbox }
    }

    /// How StoreKit 1 app receipts are verified.
    public enum ReceiptVerification: String, Sendable, CaseIterable {
        /// Apple's verifyReceipt endpoint is the authority.
        case apple
        /// Offline, by the receipt's signature chain.
        case local
    }

    /// App Store Server API credentials; all three variables must be set.
    public struct ServerAPIKey: Sendable {
        /// `APPSTORE_KEY_ID`.
        public var keyID: String
        /// `APPSTORE_ISSUER_ID`.
        public var issuerID: String
        /// `APPSTORE_PRIVATE_KEY_FILE`, a `.p8` PEM file.
        public var privateKeyFile: String
    }

    /// `DATABASE_URL`; nil lets libpq use its `PG*` variables.
    public var databaseURL: String?
    /// `RECONCILE_BUNDLE_IDS`.
    public var bundleIDs: [String]
    /// Whether the job knows any app to judge: Apple's bundle ids, or Google Play's package names
    /// alone (a Play-only job needs no `RECONCILE_BUNDLE_IDS`, SPEC section 18). The nightly rules,
    /// wherever they run (the desk, the Insights segments, a decision judged again), need one.
    public var namesAnApp: Bool { !bundleIDs.isEmpty || googlePlay.enabled }
    /// `RECONCILE_ENVIRONMENT`.
    public var environment: Environment
    /// `RECONCILE_GRACE`: purchases younger than this are not judged.
    public var grace: TimeInterval
    /// `RECONCILE_RECEIPT_VERIFICATION`.
    public var receiptVerification: ReceiptVerification
    /// `RECONCILE_MAX_ATTEMPTS`: tries of one Apple request within a run (then the upload or
    /// lookup waits for the next run), and runs a persistent `21002` gets before it is believed.
    public var maxAttempts: Int
    /// `RECONCILE_APPLE_TIMEOUT`: deadline of one request to Apple, connection included.
    public var appleTimeout: TimeInterval
    /// `APPLE_SHARED_SECRET`.
    public var sharedSecret: Secret?
    /// `APPLE_VERIFY_RECEIPT_URL`.
    public var verifyReceiptURL: String
    /// `APPLE_VERIFY_RECEIPT_SANDBOX_URL`.
    public var verifyReceiptSandboxURL: String
    /// `APPSTORE_API_URL`.
    public var serverAPIURL: String
    /// `APPSTORE_API_SANDBOX_URL`.
    public var serverAPISandboxURL: String
    /// The Server API key, when configured.
    public var serverAPIKey: ServerAPIKey?
    /// `APPSTORE_API_RATE` (requests per second); nil → 50 production, 5 sandbox.
    public var serverAPIRate: Double?
    /// `APPLE_ROOT_CERTIFICATES`: files replacing the bundled roots.
    public var rootCertificateFiles: [String]
    /// `RECONCILE_CONCURRENCY`.
    public var concurrency: Int
    /// `RECONCILE_REPORT_DIR`.
    public var reportDirectory: String
    /// `RECONCILE_UPLOADS_RELATION`, validated and quoted.
    public var uploadsRelation: QualifiedRelation
    /// `RECONCILE_DELIVERIES_RELATION`, validated and quoted.
    public var deliveriesRelation: QualifiedRelation
    /// `RECONCILE_PRODUCTS_RELATION`, validated and quoted.
    public var productsRelation: QualifiedRelation

    /// The operator's relations the job reads, as the SQL files name them (SPEC section 2).
    public var relations: Differ.Relations {
        Differ.Relations(uploads: uploadsRelation, deliveries: deliveriesRelation, products: productsRelation)
    }
    /// `RECONCILE_WEB_TOKEN`.
    public var webToken: Secret?
    /// `RECONCILE_WEB_USERS_FILE`: the review pages' people, each with a password (`reconcile serve`).
    public var webUsersFile: String?
    /// `RECONCILE_LANGUAGE`: the language of `report.md` and `report.html` (`en` or `zh-Hans`).
    public var language: Language
    /// `RECONCILE_TIME_ZONE`: the time zone of the reports' dates (an IANA name; UTC by default).
    public var timeZone: TimeZone

    /// Who the reports are written for.
    public var reportReader: Reader { Reader(language: language, timeZone: timeZone) }
    /// `RECONCILE_OUTBOX_WEBHOOK_URL`: where `reconcile outbox deliver` POSTs decisions; nil → no webhook.
    public var outboxWebhookURL: String?
    /// `RECONCILE_OUTBOX_WEBHOOK_SECRET`: the HMAC-SHA256 key of `X-Reconcile-Signature`.
    public var outboxWebhookSecret: Secret?
    /// `RECONCILE_NOTIFICATION_FORWARD_URL`: the app's own notification endpoint, to which
    /// `reconcile notifications receive` forwards every notification it stores; nil → none.
    public var notificationForwardURL: String?
    /// `RECONCILE_POLICY_FILE`: the policies that decide open review items after every run and every
    /// judgement of the notification receiver (SPEC section 17); read by ``PolicyFile/load(path:)``
    /// when a run or the receiver starts. Nil: no policy decides anything.
    public var policyFile: String?

    /// Answers to Apple's refund requests (SPEC section 14).
    public var consumption = ConsumptionAnswers()
    /// `RECONCILE_APPROVAL_ABOVE` (`CNY=648,USD=99`): decisions on items worth more wait for a
    /// second person (SPEC section 17); unset, none does.
    public var approvalAbove = ApprovalThreshold.none
    /// `RECONCILE_BULK_LIMIT`: the most items one bulk decision takes (default 5,000).
    public var bulkLimit = BulkDecision.defaultLimit
    /// Google Play, the second store (SPEC section 18); off unless `GOOGLE_PLAY_PACKAGE_NAMES` is set.
    public var googlePlay = GooglePlaySettings()
    /// Alerts to the team's chat after every run (SPEC section 19); off unless
    /// `RECONCILE_ALERT_WEBHOOK_URL` is set.
    public var alerts = AlertSettings()

    /// How the job answers `CONSUMPTION_REQUEST`s (SPEC section 14).
    public struct ConsumptionAnswers: Sendable {
        /// What `refundPreference` the answers carry.
        public enum RefundPreference: String, Sendable, CaseIterable {
            /// None is sent.
            case none
            /// From the ledger: undelivered → GRANT_FULL, fully used → DECLINE, partly → GRANT_PRORATED.
            case ledger
        }

        /// `RECONCILE_CONSUMPTION_ANSWERS=on`: answer at all (off by default).
        public var enabled = false
        /// `RECONCILE_CONSENT_RELATION`, validated and quoted: who agreed to share consumption data.
        public var consentRelation = QualifiedRelation("reconcile.refund_consent")!
        /// `RECONCILE_SAMPLE_CONTENT`: whether the app offers a free sample before purchase.
        public var sampleContentProvided = false
        /// `RECONCILE_REFUND_PREFERENCE`.
        public var refundPreference = RefundPreference.none
    }

    /// Every key this program reads.
    public static let keys = [
        "DATABASE_URL", "RECONCILE_BUNDLE_IDS", "RECONCILE_ENVIRONMENT", "RECONCILE_GRACE",
        "RECONCILE_RECEIPT_VERIFICATION", "RECONCILE_MAX_ATTEMPTS", "RECONCILE_APPLE_TIMEOUT", "APPLE_SHARED_SECRET",
        "APPLE_VERIFY_RECEIPT_URL",
        "APPLE_VERIFY_RECEIPT_SANDBOX_URL", "APPSTORE_API_URL", "APPSTORE_API_SANDBOX_URL", "APPSTORE_KEY_ID",
        "APPSTORE_ISSUER_ID", "APPSTORE_PRIVATE_KEY_FILE", "APPSTORE_API_RATE", "APPLE_ROOT_CERTIFICATES",
        "RECONCILE_CONCURRENCY", "RECONCILE_REPORT_DIR", "RECONCILE_UPLOADS_RELATION",
        "RECONCILE_DELIVERIES_RELATION", "RECONCILE_PRODUCTS_RELATION", "RECONCILE_WEB_TOKEN", "RECONCILE_WEB_USERS_FILE",
        "RECONCILE_LANGUAGE",
        "RECONCILE_TIME_ZONE", "RECONCILE_CONSUMPTION_ANSWERS", "RECONCILE_CONSENT_RELATION", "RECONCILE_SAMPLE_CONTENT",
        "RECONCILE_REFUND_PREFERENCE",
        "RECONCILE_OUTBOX_WEBHOOK_URL", "RECONCILE_OUTBOX_WEBHOOK_SECRET", "RECONCILE_NOTIFICATION_FORWARD_URL",
        "RECONCILE_APPROVAL_ABOVE", "RECONCILE_BULK_LIMIT", "RECONCILE_POLICY_FILE",
    ] + GooglePlaySettings.keys + AlertSettings.keys

    /// `text` when it is an http(s) URL with a host, else `key`'s error (which never shows the
    /// value: a webhook's URL may hold its token).
    static func httpURL(_ text: String, key: String) throws(SettingsError) -> String {
        guard let parsed = URL(string: text), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme),
            parsed.host?.isEmpty == false
        else { throw SettingsError(key: key, problem: "must be an http(s) URL") }
        return text
    }

    /// The shortest `RECONCILE_OUTBOX_WEBHOOK_SECRET` accepted.
    public static let minimumWebhookSecretLength = 16

    /// Keys whose values are secrets: never logged, never written to reports.
    public static let secretKeys = Set([
        "APPLE_SHARED_SECRET", "RECONCILE_WEB_TOKEN", "DATABASE_URL", "RECONCILE_OUTBOX_WEBHOOK_SECRET",
        "RECONCILE_PLAY_PUSH_TOKEN",
    ]).union(AlertSettings.secretKeys)

    /// Reads and validates every setting. `requireBundleIDs` is false for commands that need
    /// no bundle (migrate, review).
    public init(lookup: (String) -> String?, requireBundleIDs: Bool = true) throws(SettingsError) {
        func value(_ key: String) -> String? {
            guard let raw = lookup(key)?.trimmingCharacters(in: .whitespacesAndNewlines), !raw.isEmpty else {
                return nil
            }
            return raw
        }
        func list(_ key: String) -> [String] {
            (value(key) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }
        func choice<T: RawRepresentable & CaseIterable>(_ key: String, default fallback: T) throws(SettingsError) -> T
        where T.RawValue == String {
            guard let raw = value(key) else { return fallback }
            guard let parsed = T(rawValue: raw.lowercased()) else {
                throw SettingsError(key: key, problem: "must be one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return parsed
        }
        // The message names the bound in words: it must never echo the value given.
        func positiveInt(_ key: String, default fallback: Int, maximum: Int, _ bound: String) throws(SettingsError) -> Int {
            guard let raw = value(key) else { return fallback }
            guard let number = Int(raw), (1...maximum).contains(number) else {
                throw SettingsError(key: key, problem: "must be a positive whole number, at most \(bound)")
            }
            return number
        }
        func url(_ key: String, default fallback: String) throws(SettingsError) -> String {
            try Settings.httpURL(value(key) ?? fallback, key: key)
        }
        func relation(_ key: String, default fallback: String) throws(SettingsError) -> QualifiedRelation {
            guard let relation = QualifiedRelation(value(key) ?? fallback) else {
                throw SettingsError(key: key, problem: "must be a table or view name such as app.deliveries")
            }
            return relation
        }

        databaseURL = value("DATABASE_URL")
        bundleIDs = list("RECONCILE_BUNDLE_IDS")
        googlePlay = try GooglePlaySettings(value: value)
        alerts = try AlertSettings(value: value)
        // An app sold only on Android names its packages instead.
        if requireBundleIDs, bundleIDs.isEmpty, !googlePlay.enabled {
            throw SettingsError(key: "RECONCILE_BUNDLE_IDS", problem: "is required: the app's bundle ids, comma-separated")
        }
        environment = try choice("RECONCILE_ENVIRONMENT", default: .production)
        if let raw = value("RECONCILE_GRACE") {
            guard let seconds = TimeExpression.duration(raw) else {
                throw SettingsError(key: "RECONCILE_GRACE", problem: "must be a duration such as 30m, 2h or 1d")
            }
            grace = seconds
        } else {
            grace = 30 * 60
        }
        receiptVerification = try choice("RECONCILE_RECEIPT_VERIFICATION", default: .apple)
        maxAttempts = try positiveInt("RECONCILE_MAX_ATTEMPTS", default: 5, maximum: 100, "a hundred")
        if let raw = value("RECONCILE_APPLE_TIMEOUT") {
            guard let seconds = TimeExpression.duration(raw), seconds > 0, seconds <= 3600 else {
                throw SettingsError(key: "RECONCILE_APPLE_TIMEOUT", problem: "must be a duration such as 30s or 2m, at most an hour")
            }
            appleTimeout = seconds
        } else {
            appleTimeout = 30
        }
        sharedSecret = value("APPLE_SHARED_SECRET").map(Secret.init)
        verifyReceiptURL = try url("APPLE_VERIFY_RECEIPT_URL", default: "https://buy.itunes.apple.com/verifyReceipt")
        verifyReceiptSandboxURL = try url(
            "APPLE_VERIFY_RECEIPT_SANDBOX_URL", default: "https://sandbox.itunes.apple.com/verifyReceipt")
        serverAPIURL = try url("APPSTORE_API_URL", default: "https://api.storekit.apple.com")
        serverAPISandboxURL = try url("APPSTORE_API_SANDBOX_URL", default: "https://api.storekit-sandbox.apple.com")
        let keyParts = [value("APPSTORE_KEY_ID"), value("APPSTORE_ISSUER_ID"), value("APPSTORE_PRIVATE_KEY_FILE")]
        if let keyID = keyParts[0], let issuerID = keyParts[1], let file = keyParts[2] {
            serverAPIKey = ServerAPIKey(keyID: keyID, issuerID: issuerID, privateKeyFile: file)
        } else if keyParts.contains(where: { $0 != nil }) {
            throw SettingsError(
                key: "APPSTORE_KEY_ID",
                problem: "APPSTORE_KEY_ID, APPSTORE_ISSUER_ID and APPSTORE_PRIVATE_KEY_FILE must be set together")
        } else {
            serverAPIKey = nil
        }
        if let raw = value("APPSTORE_API_RATE") {
            guard let rate = Double(raw), rate >= 0.01, rate <= 10_000 else {
                throw SettingsError(key: "APPSTORE_API_RATE", problem: "must be a number of requests per second, from a hundredth to ten thousand")
            }
            serverAPIRate = rate
        } else {
            serverAPIRate = nil
        }
        rootCertificateFiles = list("APPLE_ROOT_CERTIFICATES")
        concurrency = try positiveInt("RECONCILE_CONCURRENCY", default: 16, maximum: 1000, "a thousand")
        reportDirectory = value("RECONCILE_REPORT_DIR") ?? "./reports"
        uploadsRelation = try relation("RECONCILE_UPLOADS_RELATION", default: "reconcile.receipt_uploads")
        deliveriesRelation = try relation("RECONCILE_DELIVERIES_RELATION", default: "reconcile.deliveries")
        productsRelation = try relation("RECONCILE_PRODUCTS_RELATION", default: "reconcile.products")
        webToken = value("RECONCILE_WEB_TOKEN").map(Secret.init)
        webUsersFile = value("RECONCILE_WEB_USERS_FILE")
        if let raw = value("RECONCILE_LANGUAGE") {
            guard let parsed = Language(rawValue: raw) ?? Language(tag: raw) else {
                throw SettingsError(
                    key: "RECONCILE_LANGUAGE", problem: "must be one of \(Language.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            language = parsed
        } else {
            language = .english
        }
        if let raw = value("RECONCILE_TIME_ZONE") {
            guard let zone = TimeZone(identifier: raw) else {
                throw SettingsError(key: "RECONCILE_TIME_ZONE", problem: "must be a time zone name such as UTC or Asia/Shanghai")
            }
            timeZone = zone
        } else {
            timeZone = .gmt
        }
        outboxWebhookURL = value("RECONCILE_OUTBOX_WEBHOOK_URL") == nil ? nil : try url("RECONCILE_OUTBOX_WEBHOOK_URL", default: "")
        outboxWebhookSecret = value("RECONCILE_OUTBOX_WEBHOOK_SECRET").map(Secret.init)
        notificationForwardURL = value("RECONCILE_NOTIFICATION_FORWARD_URL") == nil
            ? nil : try url("RECONCILE_NOTIFICATION_FORWARD_URL", default: "")
        if outboxWebhookURL != nil, outboxWebhookSecret == nil {
            throw SettingsError(
                key: "RECONCILE_OUTBOX_WEBHOOK_SECRET", problem: "must be set with RECONCILE_OUTBOX_WEBHOOK_URL (it signs the body)")
        }
        // As for the web token: a short key can be guessed from one signed body.
        if let secret = outboxWebhookSecret, secret.value.unicodeScalars.count < Self.minimumWebhookSecretLength {
            throw SettingsError(
                key: "RECONCILE_OUTBOX_WEBHOOK_SECRET",
                problem: "must be at least \(Self.minimumWebhookSecretLength) characters (e.g. openssl rand -hex 24)")
        }
        func flag(_ key: String) throws(SettingsError) -> Bool {
            switch value(key)?.lowercased() {
            case nil, "off", "false", "no", "0": return false
            case "on", "true", "yes", "1": return true
            default: throw SettingsError(key: key, problem: "must be on or off")
            }
        }
        policyFile = value("RECONCILE_POLICY_FILE")
        consumption.enabled = try flag("RECONCILE_CONSUMPTION_ANSWERS")
        consumption.consentRelation = try relation("RECONCILE_CONSENT_RELATION", default: "reconcile.refund_consent")
        consumption.sampleContentProvided = try flag("RECONCILE_SAMPLE_CONTENT")
        consumption.refundPreference = try choice("RECONCILE_REFUND_PREFERENCE", default: .none)
        if let raw = value("RECONCILE_APPROVAL_ABOVE") {
            guard let threshold = ApprovalThreshold(parsing: raw) else {
                throw SettingsError(
                    key: "RECONCILE_APPROVAL_ABOVE",
                    problem: "must be amounts per currency in major units, such as CNY=648,USD=99")
            }
            approvalAbove = threshold
        }
        bulkLimit = try positiveInt("RECONCILE_BULK_LIMIT", default: BulkDecision.defaultLimit, maximum: 1_000_000, "a million")
    }
}

/// A setting that is wrong, naming the variable and what it must be.
public struct SettingsError: Error, Equatable, CustomStringConvertible {
    /// The variable (or config-file key) at fault.
    public let key: String
    /// What is wrong with it; never its value, which may be a secret.
    public let problem: String

    /// Creates an error for a key.
    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "\(key) \(problem)" }
}

/// A secret value that prints as `‹redacted›` wherever it is interpolated.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; read it only where it is sent.
    public let value: String

    /// Wraps a secret.
    public init(_ value: String) { self.value = value }

    public var description: String { "‹redacted›" }
    public var debugDescription: String { "‹redacted›" }
}

extension Settings {
    /// A new connection to the job's database (`DATABASE_URL`, else libpq's `PG*` variables): the
    /// one way every command and service of the product connects.
    public func connect() throws -> Connection {
        try Connection(url: databaseURL)
    }
}
