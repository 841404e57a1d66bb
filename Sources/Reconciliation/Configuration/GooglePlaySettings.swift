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
        // SPEC section 18 sets no rule on these together, so none stops a command: a push token of
        // any length is the operator's (docs/operations.md advises 24 random bytes); acknowledging
        // without a service account does nothing (only the Developer API acknowledges, and without it
        // nothing says a purchase is unacknowledged); packages without keys have every upload refused
        // as `play_package_without_key`; keys or a service account without packages leave Play off.
    }
}
