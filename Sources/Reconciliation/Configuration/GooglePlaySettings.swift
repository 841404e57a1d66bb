import Foundation
import GooglePlay

/// Google Play's settings (SPEC section 18). Play is on when `GOOGLE_PLAY_PACKAGE_NAMES` is set.
public struct GooglePlaySettings: Sendable {
    /// `GOOGLE_PLAY_PACKAGE_NAMES`: the Android apps reconciled (Play's counterpart of
    /// `RECONCILE_BUNDLE_IDS`). Empty: Play is off.
    public var packageNames: [String] = []
    /// `GOOGLE_PLAY_LICENSE_KEYS`: `PACKAGE=KEY` pairs (KEY base64, or `@FILE`), as given; parsed
    /// and checked when the services are made.
    public var licenseKeys: String?
    /// `GOOGLE_PLAY_SERVICE_ACCOUNT_FILE`: the service account's JSON key, for the Developer API.
    public var serviceAccountFile: String?
    /// `GOOGLE_PLAY_API_URL`.
    public var apiURL = GooglePlay.defaultAPIURL
    /// `GOOGLE_PLAY_API_RATE`: requests a second (default 20; Google's bucket is 3,000 a minute).
    public var apiRate = 20.0
    /// `RECONCILE_PLAY_PUSH_TOKEN`: the `?token=` a Pub/Sub push must carry.
    public var pushToken: Secret?
    /// `RECONCILE_PLAY_ACKNOWLEDGE=on`: acknowledge delivered purchases Google still reports
    /// unacknowledged, before Google refunds them.
    public var acknowledge = false

    /// Whether Play is reconciled at all.
    public var enabled: Bool { !packageNames.isEmpty }
    /// Whether the Developer API is configured (the authority on a purchase's state).
    public var apiEnabled: Bool { enabled && serviceAccountFile != nil }

    /// Every key these settings read.
    public static let keys = [
        "GOOGLE_PLAY_PACKAGE_NAMES", "GOOGLE_PLAY_LICENSE_KEYS", "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE",
        "GOOGLE_PLAY_API_URL", "GOOGLE_PLAY_API_RATE", "RECONCILE_PLAY_PUSH_TOKEN", "RECONCILE_PLAY_ACKNOWLEDGE",
    ]

    /// Play off.
    public init() {}

    /// Reads and validates the settings; `value` answers a key's trimmed, non-empty value.
    init(value: (String) -> String?) throws(SettingsError) {
        packageNames = (value("GOOGLE_PLAY_PACKAGE_NAMES") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        licenseKeys = value("GOOGLE_PLAY_LICENSE_KEYS")
        serviceAccountFile = value("GOOGLE_PLAY_SERVICE_ACCOUNT_FILE")
        if let raw = value("GOOGLE_PLAY_API_URL") { apiURL = try Settings.httpURL(raw, key: "GOOGLE_PLAY_API_URL") }
        if let raw = value("GOOGLE_PLAY_API_RATE") {
            guard let rate = Double(raw), rate >= 0.01, rate <= 10_000 else {
                throw SettingsError(
                    key: "GOOGLE_PLAY_API_RATE",
                    problem: "must be a number of requests per second, from a hundredth to ten thousand")
            }
            apiRate = rate
        }
        pushToken = value("RECONCILE_PLAY_PUSH_TOKEN").map(Secret.init)
        switch value("RECONCILE_PLAY_ACKNOWLEDGE")?.lowercased() {
        case nil, "off", "false", "no", "0": acknowledge = false
        case "on", "true", "yes", "1": acknowledge = true
        default: throw SettingsError(key: "RECONCILE_PLAY_ACKNOWLEDGE", problem: "must be on or off")
        }
        // As for the web token: a short token can be guessed, and it opens the push endpoint.
        if let token = pushToken, token.value.unicodeScalars.count < Settings.minimumWebhookSecretLength {
            throw SettingsError(
                key: "RECONCILE_PLAY_PUSH_TOKEN",
                problem: "must be at least \(Settings.minimumWebhookSecretLength) characters (e.g. openssl rand -hex 24)")
        }
        if acknowledge, serviceAccountFile == nil {
            throw SettingsError(
                key: "RECONCILE_PLAY_ACKNOWLEDGE",
                problem: "needs GOOGLE_PLAY_SERVICE_ACCOUNT_FILE: only the Play Developer API can acknowledge a purchase")
        }
        if enabled, licenseKeys == nil, serviceAccountFile == nil {
            throw SettingsError(
                key: "GOOGLE_PLAY_LICENSE_KEYS",
                problem: "or GOOGLE_PLAY_SERVICE_ACCOUNT_FILE must be set with GOOGLE_PLAY_PACKAGE_NAMES: "
                    + "without either, no Play purchase can be verified")
        }
        if !enabled, licenseKeys != nil || serviceAccountFile != nil {
            throw SettingsError(
                key: "GOOGLE_PLAY_PACKAGE_NAMES",
                problem: "is required with GOOGLE_PLAY_LICENSE_KEYS or GOOGLE_PLAY_SERVICE_ACCOUNT_FILE: the Android apps' package names, comma-separated")
        }
    }
}
