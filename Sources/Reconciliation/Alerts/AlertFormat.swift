import Crypto
import Foundation

/// The body an alert webhook expects (`RECONCILE_ALERT_FORMAT`, SPEC section 19): the job's own
/// JSON, or a chat platform's own incoming-webhook message.
public enum AlertFormat: String, Sendable, CaseIterable, Codable {
    /// `{"run_id", "title", "text", "lines", "fired", "report_url"}`: for a service of the team's own.
    case json
    /// Slack's incoming webhook: `{"text": …}` in Slack's mrkdwn.
    case slack
    /// Feishu (Lark) custom bot: `{"msg_type": "text", "content": {"text"}}`, with `timestamp` and
    /// `sign` when the bot checks signatures.
    case feishu
    /// DingTalk custom robot: `{"msgtype": "markdown", "markdown": {"title", "text"}}`, signed by
    /// `timestamp` and `sign` in the query.
    case dingtalk
    /// WeCom (WeChat Work) group robot: `{"msgtype": "markdown", "markdown": {"content"}}`.
    case wecom

    /// Whether `RECONCILE_ALERT_SECRET` means something for this format.
    public var isSigned: Bool { self == .feishu || self == .dingtalk }

    /// The request for `message`: the URL to POST to (DingTalk's signature is in the query) and
    /// the JSON body. `now` is the signature's timestamp.
    public func request(_ message: AlertMessage, url: String, secret: Secret?, now: Date) throws -> (url: String, body: Data) {
        var target = url
        let object: [String: Any]
        switch self {
        case .json:
            var json: [String: Any] = [
                "title": message.title, "text": message.plainText, "lines": message.lines,
                "fired": message.fired.map(\.json), "language": message.language,
            ]
            json["run_id"] = message.runID
            json["report_url"] = message.link
            if let summary = message.summary {
                var counts: [String: Any] = [
                    "open_items": summary.openItems, "new_findings": summary.newFindings,
                    "value_at_risk": summary.valueAtRisk,
                ]
                counts["top_segment"] = summary.topSegment.map {
                    ["segment": $0.name, "leaks": $0.leaks, "purchases": $0.purchases] as [String: Any]
                }
                json["summary"] = counts
            }
            object = json
        case .slack:
            object = ["text": message.slackText]
        case .feishu:
            var json: [String: Any] = ["msg_type": "text", "content": ["text": message.plainText]]
            if let secret {
                let timestamp = String(Int64(now.timeIntervalSince1970))
                json["timestamp"] = timestamp
                json["sign"] = Self.feishuSignature(timestamp: timestamp, secret: secret.value)
            }
            object = json
        case .dingtalk:
            object = ["msgtype": "markdown", "markdown": ["title": message.title, "text": message.markdown(heading: "### ")]]
            if let secret {
                let timestamp = String(Int64(now.timeIntervalSince1970 * 1000))
                let sign = Self.dingTalkSignature(timestamp: timestamp, secret: secret.value)
                target += (url.contains("?") ? "&" : "?") + "timestamp=\(timestamp)&sign=\(Self.queryEscaped(sign))"
            }
        case .wecom:
            object = ["msgtype": "markdown", "markdown": ["content": message.markdown(heading: "**", headingEnd: "**")]]
        }
        let body = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return (target, body)
    }

    /// Feishu's custom-bot signature: HMAC-SHA256 keyed by `timestamp + "\n" + secret` over no
    /// bytes at all, base64 (open.feishu.cn/document/client-docs/bot-v3/add-custom-bot,
    /// "signature verification": the string to sign is the key, the message is empty; the
    /// timestamp is in seconds and must be within an hour of Feishu's clock).
    public static func feishuSignature(timestamp: String, secret: String) -> String {
        let key = SymmetricKey(data: Data((timestamp + "\n" + secret).utf8))
        return Data(HMAC<SHA256>.authenticationCode(for: Data(), using: key)).base64EncodedString()
    }

    /// DingTalk's custom-robot signature: HMAC-SHA256 keyed by the secret over
    /// `timestamp + "\n" + secret`, base64 (then URL-encoded into `&sign=`); the timestamp is in
    /// milliseconds and must be within an hour of DingTalk's clock (open.dingtalk.com, custom robot
    /// security settings, "加签").
    public static func dingTalkSignature(timestamp: String, secret: String) -> String {
        let key = SymmetricKey(data: Data(secret.utf8))
        return Data(HMAC<SHA256>.authenticationCode(for: Data((timestamp + "\n" + secret).utf8), using: key))
            .base64EncodedString()
    }

    /// A query value with everything but unreserved characters percent-encoded (base64's `+`, `/`
    /// and `=` included).
    static func queryEscaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn:
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? text
    }
}
