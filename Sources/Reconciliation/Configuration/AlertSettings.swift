import Foundation

/// Where the job's alerts go (SPEC section 19): off unless `RECONCILE_ALERT_WEBHOOK_URL` is set.
public struct AlertSettings: Sendable {
    /// `RECONCILE_ALERT_WEBHOOK_URL`: the incoming webhook of the team's chat (Slack, Feishu,
    /// DingTalk, WeCom) or of a service of its own. A secret: the chat platforms put the bot's
    /// token in it.
    public var webhookURL: Secret?
    /// `RECONCILE_ALERT_FORMAT`: the body the webhook expects (default `json`).
    public var format = AlertFormat.json
    /// `RECONCILE_ALERT_SECRET`: the signing secret of a Feishu or DingTalk bot with signature
    /// checking on.
    public var secret: Secret?
    /// `RECONCILE_PUBLIC_URL`: where the review pages are reached (`https://reconcile.example.com`);
    /// an alert links to its run's report there. Nil: no link.
    public var publicURL: String?

    /// Whether alerts are sent at all.
    public var enabled: Bool { webhookURL != nil }

    /// Every key these settings read.
    public static let keys = [
        "RECONCILE_ALERT_WEBHOOK_URL", "RECONCILE_ALERT_FORMAT", "RECONCILE_ALERT_SECRET", "RECONCILE_PUBLIC_URL",
    ]
    /// The keys whose values are secrets.
    public static let secretKeys: Set<String> = ["RECONCILE_ALERT_WEBHOOK_URL", "RECONCILE_ALERT_SECRET"]

    /// Alerts off.
    public init() {}

    /// Reads and validates the settings; `value` answers a key's trimmed, non-empty value.
    init(value: (String) -> String?) throws(SettingsError) {
        func httpURL(_ key: String) throws(SettingsError) -> String? {
            guard let raw = value(key) else { return nil }
            return try Settings.httpURL(raw, key: key)
        }
        webhookURL = try httpURL("RECONCILE_ALERT_WEBHOOK_URL").map(Secret.init)
        publicURL = try httpURL("RECONCILE_PUBLIC_URL").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        if let raw = value("RECONCILE_ALERT_FORMAT") {
            guard let format = AlertFormat(rawValue: raw.lowercased()) else {
                throw SettingsError(
                    key: "RECONCILE_ALERT_FORMAT",
                    problem: "must be one of \(AlertFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self.format = format
        }
        // Read whatever the format: a secret signs only Feishu's and DingTalk's messages
        // (`AlertFormat.request`), and without a webhook URL alerts are off; neither stops a command
        // (SPEC section 19 makes neither an error, and one set of settings may serve several formats).
        secret = value("RECONCILE_ALERT_SECRET").map(Secret.init)
    }
}
