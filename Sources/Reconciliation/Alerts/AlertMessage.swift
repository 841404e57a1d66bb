import Foundation

/// One alert as the team reads it, in the staff's language (`RECONCILE_LANGUAGE`; every text from
/// the catalogs): a title, one line per rule that fired, and a link to the run's report.
public struct AlertMessage: Sendable, Equatable, Codable {
    public var runID: Int64?
    public var language: String
    public var title: String
    public var lines: [String]
    /// The run's report on the review pages (`RECONCILE_PUBLIC_URL`), nil without one.
    public var link: String?
    /// The link's text.
    public var linkText: String
    public var fired: [FiredAlert]
    /// The run's state the message ends with; nil for a test message.
    public var summary: Summary?

    /// What every run's message says besides what fired (SPEC section 19): the counts, the value
    /// at risk, the top flagged segment.
    public struct Summary: Sendable, Equatable, Codable {
        public var openItems: Int
        public var newFindings: Int
        /// Per currency, milliunits.
        public var valueAtRisk: [String: Int64]
        public var topSegment: RunAlerts.FlaggedSegment?

        public init(openItems: Int, newFindings: Int, valueAtRisk: [String: Int64], topSegment: RunAlerts.FlaggedSegment?) {
            self.openItems = openItems
            self.newFindings = newFindings
            self.valueAtRisk = valueAtRisk
            self.topSegment = topSegment
        }

        enum CodingKeys: String, CodingKey {
            case openItems = "open_items", newFindings = "new_findings", valueAtRisk = "value_at_risk"
            case topSegment = "top_segment"
        }
    }

    enum CodingKeys: String, CodingKey {
        case runID = "run_id", language, title, lines, link, linkText = "link_text", fired, summary
    }

    /// The message for `fired` of run `runID` (nil: a test message), ending with `summary`'s lines.
    public init(runID: Int64?, fired: [FiredAlert], summary: Summary? = nil, reader: Reader, publicURL: String?) {
        let t = reader.catalog
        self.runID = runID
        language = reader.language.rawValue
        self.fired = fired
        if let runID {
            title = t.text("alert.title", ["run": String(runID)])
            link = publicURL.map { "\($0)/runs/\(runID)/report" }
        } else {
            title = t["alert.test.title"]
            link = publicURL.map { "\($0)/runs" }
        }
        linkText = t[runID == nil ? "alert.test.link" : "alert.report_link"]
        lines = fired.map { fired in
            switch fired.rule {
            case .newHighFindings:
                t.text("alert.new_high_findings", ["count": reader.number(fired.count ?? 0)])
            case .valueAtRisk:
                t.text(fired.previousMilli == nil ? "alert.value_at_risk" : "alert.value_at_risk_grew", [
                    "amount": reader.money(milli: fired.amountMilli ?? 0, currency: fired.currency ?? ""),
                    "previous": reader.money(milli: fired.previousMilli ?? 0, currency: fired.currency ?? ""),
                ])
            case .flaggedSegment:
                t.text("alert.flagged_segment", ["segments": (fired.segments ?? []).joined(separator: ", ")])
            case .unacknowledgedVoids:
                t.text("alert.unacknowledged_voids", ["count": reader.number(fired.count ?? 0)])
            case .undeliveredNotifications:
                t.text("alert.undelivered_notifications", ["count": reader.number(fired.count ?? 0)])
            case .uploadsRetry:
                t.text("alert.uploads_retry", [
                    "count": reader.number(fired.count ?? 0), "uploads": reader.number(fired.of ?? 0),
                ])
            case .test:
                t["alert.test.line"]
            }
        }
        self.summary = summary
        guard let summary else { return }
        lines.append(t.text("alert.summary.counts", [
            "open": reader.number(summary.openItems), "new": reader.number(summary.newFindings),
        ]))
        // The value at risk once: a rule on it said it already.
        if !summary.valueAtRisk.isEmpty, !fired.contains(where: { $0.rule == .valueAtRisk }) {
            lines.append(t.text("alert.summary.value_at_risk", [
                "amounts": summary.valueAtRisk.sorted { $0.key < $1.key }
                    .map { reader.money(milli: $0.value, currency: $0.key) }.joined(separator: ", "),
            ]))
        }
        if let top = summary.topSegment {
            lines.append(t.text("alert.summary.top_segment", [
                "segment": top.name, "leaks": reader.number(top.leaks), "purchases": reader.number(top.purchases),
            ]))
        }
    }

    /// Plain text: the title, the lines, the link (Feishu's text message, the json format's `text`).
    var plainText: String {
        ([title] + lines.map { "• " + $0 } + (link.map { ["\(linkText): \($0)"] } ?? [])).joined(separator: "\n")
    }

    /// Slack's mrkdwn: a bold title, the lines, `<url|text>`.
    var slackText: String {
        (["*\(Self.slackEscaped(title))*"] + lines.map { "• " + Self.slackEscaped($0) }
            + (link.map { ["<\($0)|\(Self.slackEscaped(linkText))>"] } ?? [])).joined(separator: "\n")
    }

    /// Markdown for DingTalk and WeCom: a heading, a list, a link.
    func markdown(heading: String, headingEnd: String = "") -> String {
        ([heading + title + headingEnd, ""] + lines.map { "- " + $0 }
            + (link.map { ["", "[\(linkText)](\($0))"] } ?? [])).joined(separator: "\n")
    }

    /// Slack's three control characters (api.slack.com, "Escaping text": &, < and >).
    static func slackEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
