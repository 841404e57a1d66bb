import Foundation
import Mustache

extension ReportFormat {
    /// `report.html`: one self-contained page (the pages' stylesheet inline, SVG charts, no script,
    /// no network) with the summary, findings by kind, findings by purchase day, value at risk and
    /// the findings table, in the reader's language and time zone, rendered from
    /// `Embedded/templates/report.mustache`. Every value is escaped per Unicode scalar by the
    /// template (user and product ids come from clients; catalog text is escaped too).
    static func htmlHeader(_ report: RunReport, _ reader: Reader) -> String {
        ReportPage.render(ReportPage(reader, head: ReportPage.Head(report, reader)))
    }

    static func htmlRow(_ finding: RunReport.Finding, _ reader: Reader) -> String {
        let row = ReportPage.Row(finding, reader)
        guard let pattern = ReportPage.RowPattern.byLanguage[reader.language] else {
            return ReportPage.render(ReportPage(reader, finding: row))
        }
        return pattern.html(row)
    }

    static func htmlFooter(_ report: RunReport, _ reader: Reader) -> String {
        let foot = ReportPage.Foot(
            hasFindings: report.openFindings > 0,
            datesNote: reader.catalog.text("report.dates_note", ["zone": reader.zoneName]))
        return ReportPage.render(ReportPage(reader, foot: foot))
    }
}

/// What `report.mustache` is rendered with: one of its three parts (head, a finding's row, foot)
/// and the catalog as `t`.
struct ReportPage: TemplateValues {
    let t: CatalogNode
    var head: Head?
    var finding: Row?
    var foot: Foot?

    init(_ reader: Reader, head: Head? = nil, finding: Row? = nil, foot: Foot? = nil) {
        t = CatalogNode(reader.catalog)
        self.head = head
        self.finding = finding
        self.foot = foot
    }

    static let byName: TemplateNames<Self> = ["t": \.t, "head": \.head, "finding": \.finding, "foot": \.foot]

    /// The template and the stylesheet it embeds (`{{>stylesheet}}`: a partial, so the CSS is
    /// written as it is, never escaped, and no `{{{ }}}` is needed).
    static let library: MustacheLibrary = {
        do {
            var library = try MustacheLibrary.scalarEscaped([(name: "report", text: source)])
            library.register(try MustacheTemplate(string: Stylesheet.css), named: "stylesheet")
            return library
        } catch {
            preconditionFailure("templates/report.mustache does not parse: \(error)")
        }
    }()

    /// The template's text.
    static let source: String = {
        guard let data = EmbeddedFiles.data("templates/report.mustache") else {
            preconditionFailure("the embedded template templates/report.mustache is missing")
        }
        return String(decoding: data, as: UTF8.self)
    }()

    static func render(_ page: ReportPage) -> String {
        library.render(page, withTemplate: "report") ?? ""
    }

    // The parts below look their values up by name, as `ReportPage` does: through `Mirror`, the
    // head of a report took about 10 ms of a quiet night (docs/benchmarks.md, issue 28 item 4). A
    // name a part does not have is nil, and the template looks further up, as with `Mirror`.

    /// Everything before the first finding.
    struct Head: TemplateValues {
        struct Card: TemplateValues {
            let label: String
            let value: String
            /// `good` or `warn`: the value's colour.
            let tone: String?

            static let byName: TemplateNames<Self> = ["label": \.label, "value": \.value, "tone": \.tone]
        }

        let lang: String
        let title: String
        let dryRun: Bool
        let status: String
        let statusLabel: String
        let meta: String
        let cards: [Card]
        let retryingNotice: String?
        let kindChart: KindChart
        let dayChart: DayChart
        let risk: Risk?
        let refundActivity: RefundActivity?
        /// Google Play's summary lines; nil on a run with Play off.
        let play: Play?
        /// What each policy decided in the run; nil without a policy file.
        let policies: Policies?
        /// SPEC section 19's trend charts up to the run; nil when the run has none.
        let trends: TrendsSection?

        struct TrendsSection: TemplateValues {
            struct Chart: TemplateValues {
                struct Row: TemplateValues {
                    let cells: [String]
                    static let byName: TemplateNames<Self> = ["cells": \.cells]
                }

                let id: String
                let title: String
                let svg: String
                let headers: [String]
                let rows: [Row]

                static let byName: TemplateNames<Self> = [
                    "id": \.id, "title": \.title, "svg": \.svg, "headers": \.headers, "rows": \.rows,
                ]
            }

            let explanation: String
            let charts: [Chart]

            static let byName: TemplateNames<Self> = ["explanation": \.explanation, "charts": \.charts]

            init(_ trends: Trends, _ reader: Reader) {
                explanation = reader.catalog.text("trends.explanation", ["days": String(trends.days.count)])
                charts = TrendCharts.charts(trends, reader: reader, prefix: "report-trend").map {
                    Chart(id: $0.id, title: $0.title, svg: $0.svg, headers: $0.headers, rows: $0.rows.map(Chart.Row.init))
                }
            }
        }
        let hasFindings: Bool

        struct Policies: TemplateValues {
            struct Row: TemplateValues {
                let rule: String
                let decided: Int
                let amount: String

                static let byName: TemplateNames<Self> = [
                    "rule": \.rule, "decided": \.decided, "amount": \.amount,
                ]
            }

            let rows: [Row]

            static let byName: TemplateNames<Self> = ["rows": \.rows]
        }

        static let byName: TemplateNames<Self> = [
            "lang": \.lang, "title": \.title, "dryRun": \.dryRun, "status": \.status, "statusLabel": \.statusLabel,
            "meta": \.meta, "cards": \.cards, "retryingNotice": \.retryingNotice, "kindChart": \.kindChart,
            "dayChart": \.dayChart, "risk": \.risk, "refundActivity": \.refundActivity, "play": \.play, "policies": \.policies,
            "trends": \.trends, "hasFindings": \.hasFindings,
        ]

        init(_ report: RunReport, _ reader: Reader) {
            let t = reader.catalog
            lang = reader.language.rawValue
            title = t.text("report.title", ["run": String(report.runID)])
            dryRun = report.dryRun
            status = report.status.rawValue
            statusLabel = t.runStatus(report.status)
            meta = [
                t.text("report.window", [
                    "since": report.since.map { reader.minute($0) } ?? t["report.from_beginning"],
                    "until": reader.minute(report.until),
                ]),
                t.environment(report.environment),
                t.text("report.started", ["date": reader.minute(report.startedAt)]),
                t.text("report.finished", ["date": reader.minute(report.finishedAt)]),
            ].joined(separator: " · ")
            let verification = report.verification
            func card(_ key: String, _ value: Int, warnUnlessZero: Bool = false, goodWhenZero: Bool = false) -> Card {
                let tone = value == 0 ? (goodWhenZero ? "good" : nil) : (warnUnlessZero || goodWhenZero ? "warn" : nil)
                return Card(label: t[key], value: String(value), tone: tone)
            }
            cards = [
                card("report.card_open", report.openFindings, goodWhenZero: true),
                card("report.card_new", report.newFindings, goodWhenZero: true),
                report.dryRun
                    ? Card(label: t["report.card_auto_resolved"], value: t["common.none"], tone: nil)
                    : card("report.card_auto_resolved", report.changes.autoResolved),
                card("report.card_uploads", verification.uploads),
                card("report.card_verified", verification.verified),
                card("report.card_invalid", verification.invalid, warnUnlessZero: true),
                card("report.card_retrying", verification.retry, warnUnlessZero: true),
            ]
            retryingNotice = verification.retry > 0
                ? t.text("report.retrying_notice", ["count": String(verification.retry)]) : nil
            kindChart = KindChart(report, t)
            dayChart = DayChart(report.summary, t)
            risk = Risk(report, reader)
            refundActivity = report.hasRefundActivity ? RefundActivity(report, t) : nil
            play = report.play.map { summary in
                let said = summary.summaryLines(t)
                return Play(lines: said.lines, notices: said.notices)
            }
            trends = report.trends.map { TrendsSection($0, reader) }
            policies = report.policies.isEmpty ? nil : Policies(rows: report.policies.map {
                Policies.Row(rule: $0.rule, decided: $0.decided, amount: $0.amountText(reader))
            })
            hasFindings = report.openFindings > 0
        }
    }

    /// Findings per kind: one bar per kind in its severity's colour (the stylesheet's `.sev-<severity>`).
    struct KindChart: TemplateValues {
        struct Bar: TemplateValues {
            let label: String
            let count: Int
            let severity: String
            let textY: Int
            let barY: Int
            let barWidth: Int
            let countX: Int

            static let byName: TemplateNames<Self> = [
                "label": \.label, "count": \.count, "severity": \.severity, "textY": \.textY, "barY": \.barY,
                "barWidth": \.barWidth, "countX": \.countX,
            ]
        }

        struct Legend: TemplateValues {
            let severity: String
            let label: String

            static let byName: TemplateNames<Self> = ["severity": \.severity, "label": \.label]
        }

        static let rowHeight = 26, labelWidth = 170, trackWidth = 260

        let width = KindChart.labelWidth + KindChart.trackWidth + 50
        let height: Int
        let labelX = KindChart.labelWidth - 8
        let barX = KindChart.labelWidth
        let trackWidth = KindChart.trackWidth
        let bars: [Bar]
        let legend: [Legend]

        static let byName: TemplateNames<Self> = [
            "width": \.width, "height": \.height, "labelX": \.labelX, "barX": \.barX, "trackWidth": \.trackWidth,
            "bars": \.bars, "legend": \.legend,
        ]

        init(_ report: RunReport, _ t: Catalog) {
            let counts = report.counts
            let rows = FindingKind.allCases.map { ($0, counts[$0.rawValue] ?? 0) }
            let maximum = max(1, rows.map(\.1).max() ?? 1)
            height = rows.count * Self.rowHeight + 4
            bars = rows.enumerated().map { index, row in
                let (kind, count) = row
                let y = index * Self.rowHeight + 2
                let width = count == 0 ? 0 : max(2, Self.trackWidth * count / maximum)
                return Bar(
                    label: t.kind(kind), count: count, severity: kind.severity.rawValue, textY: y + 17, barY: y + 4,
                    barWidth: width, countX: Self.labelWidth + width + 6)
            }
            legend = Severity.known.map { Legend(severity: $0.rawValue, label: t.severity($0)) }
        }
    }

    /// Findings per purchase day. Days are UTC days: the summary counts them in SQL before any
    /// reader is known.
    struct DayChart: TemplateValues {
        struct Plot: TemplateValues {
            struct Day: TemplateValues {
                let x: Int
                let y: Int
                let barWidth: Int
                let barHeight: Int
                /// `2026-11-23`.
                let date: String
                let count: Int
                /// The axis label under the bar (`11-23`), on every few bars.
                let tick: String?

                static let byName: TemplateNames<Self> = [
                    "x": \.x, "y": \.y, "barWidth": \.barWidth, "barHeight": \.barHeight, "date": \.date,
                    "count": \.count, "tick": \.tick,
                ]
            }

            static let height = 160, top = 14, bottom = 34
            // A fixed drawing width, so the text keeps its size however few days there are.
            let width = 480
            let height = Plot.height + Plot.top + Plot.bottom
            let axisX = 30
            let scaleX = 26
            let topY = Plot.top + 4
            let baseY = Plot.top + Plot.height
            let tickY = Plot.top + Plot.height + 16
            let maximum: Int
            let days: [Day]

            static let byName: TemplateNames<Self> = [
                "width": \.width, "height": \.height, "axisX": \.axisX, "scaleX": \.scaleX, "topY": \.topY,
                "baseY": \.baseY, "tickY": \.tickY, "maximum": \.maximum, "days": \.days,
            ]
        }

        let label: String
        let plot: Plot?
        let undated: String?

        static let byName: TemplateNames<Self> = ["label": \.label, "plot": \.plot, "undated": \.undated]

        init(_ summary: RunReport.FindingSummary, _ t: Catalog) {
            label = t.text("report.by_day", ["zone": "UTC"])
            let perDay = summary.byPurchaseDay
            guard let first = perDay.keys.min(), let last = perDay.keys.max() else {
                plot = nil
                undated = summary.undated > 0 ? t.text("report.undated", ["count": String(summary.undated)]) : nil
                return
            }
            undated = summary.undated > 0 ? t.text("report.undated_long", ["count": String(summary.undated)]) : nil
            // At most 90 days: a window over a long history shows its most recent quarter.
            let days = Array(max(first, last - 89)...last)
            let maximum = max(1, days.map { perDay[$0] ?? 0 }.max() ?? 1)
            let step = max(6, min(60, 440 / days.count))
            let left = 34 + (440 - step * days.count) / 2
            let labelEvery = max(1, days.count / 6)
            plot = Plot(
                maximum: maximum,
                days: days.enumerated().map { index, day in
                    let count = perDay[day] ?? 0
                    let barHeight = count == 0 ? 0 : max(2, Plot.height * count / maximum)
                    let midnight = Date(timeIntervalSince1970: Double(day) * 86_400)
                    let date = String(TimeExpression.format(midnight).prefix(10))
                    let ticked = index % labelEvery == 0 || index == days.count - 1
                    return Plot.Day(
                        x: left + index * step, y: Plot.top + Plot.height - barHeight, barWidth: max(2, step - 3),
                        barHeight: barHeight, date: date, count: count, tick: ticked ? String(date.dropFirst(5)) : nil)
                })
        }
    }

    /// Value at risk: a total per currency, then each kind's amount; nil when nothing is priced.
    struct Risk: TemplateValues {
        struct Total: TemplateValues {
            let amount: String
            let label: String

            static let byName: TemplateNames<Self> = ["amount": \.amount, "label": \.label]
        }

        struct Entry: TemplateValues {
            let kind: String
            let currency: String
            let amount: String

            static let byName: TemplateNames<Self> = [
                "kind": \.kind, "currency": \.currency, "amount": \.amount,
            ]
        }

        let totals: [Total]
        let entries: [Entry]

        static let byName: TemplateNames<Self> = ["totals": \.totals, "entries": \.entries]

        init?(_ report: RunReport, _ reader: Reader) {
            let risk = report.valueAtRisk
            guard !risk.isEmpty else { return nil }
            let t = reader.catalog
            self.totals = RunReport.ValueAtRisk.totals(risk).sorted { $0.key < $1.key }.map { currency, amount in
                Total(amount: reader.money(milli: amount, currency: currency),
                      label: t.text("report.at_risk", ["currency": currency]))
            }
            entries = risk.map {
                Entry(kind: t.kind($0.kind), currency: $0.currency,
                      amount: reader.money(milli: $0.amountMilli, currency: $0.currency))
            }
        }
    }

    /// Google Play's summary (SPEC section 18): what the run acknowledged, and the notices.
    struct Play: TemplateValues {
        let lines: [String]
        let notices: [String]

        static let byName: TemplateNames<Self> = ["lines": \.lines, "notices": \.notices]
    }

    struct RefundActivity: TemplateValues {
        let notifications: String
        let consumption: String
        let undeliveredNotice: String?

        static let byName: TemplateNames<Self> = [
            "notifications": \.notifications, "consumption": \.consumption, "undeliveredNotice": \.undeliveredNotice,
        ]

        init(_ report: RunReport, _ t: Catalog) {
            notifications = t.text("report.notifications_line", report.notifications.catalogValues)
            consumption = t.text("report.consumption_line", report.consumption.catalogValues)
            let undelivered = report.notifications.undelivered
            undeliveredNotice = undelivered > 0
                ? t.text("report.undelivered_notice", ["count": String(undelivered)]) : nil
        }
    }

    /// One finding's row of the findings table: its values by field, and whether it is new.
    struct Row: MustacheParent {
        /// The values the template's row writes (`{{item}}`, `{{kind}}`…).
        enum Field: String, CaseIterable {
            case item, kind, severity, severityLabel, store, transaction, user, product, purchased, amount, action
        }

        let isNew: Bool
        private let values: [Field: String]

        init(_ finding: RunReport.Finding, _ reader: Reader) {
            let t = reader.catalog
            let none = t["common.none"]
            isNew = finding.isNew
            values = [
                .item: finding.reviewItemID.map(String.init) ?? none,
                .kind: t.kind(finding.kind),
                .severity: finding.kind.severity.rawValue,
                .severityLabel: t.severity(finding.kind.severity),
                .store: t.store(finding.store),
                .transaction: finding.transactionID ?? none,
                .user: finding.userID ?? none,
                .product: finding.productID ?? none,
                .purchased: finding.purchaseDate.map { reader.day($0) } ?? none,
                .amount: finding.amountMilli.map { reader.money(milli: $0, currency: finding.currency ?? "") } ?? "",
                .action: t.suggestedAction(finding.kind.suggestedAction),
            ]
        }

        /// A row whose every value is a marker naming its field, for ``RowPattern``.
        init(markers isNew: Bool) {
            self.isNew = isNew
            values = Dictionary(uniqueKeysWithValues: Field.allCases.map { ($0, RowPattern.marker($0)) })
        }

        subscript(_ field: Field) -> String { values[field] ?? "" }

        func child(named name: String) -> Any? {
            name == "isNew" ? isNew : Field(rawValue: name).map { self[$0] }
        }
    }

    /// The template's row part, rendered once per language and per `isNew` with a marker in place
    /// of each value, then filled per finding: the markup is still the template's, but a report of
    /// a million findings costs a million string fills rather than a million template walks
    /// (about 30 µs each in a release build). Each value is escaped as the template escapes it;
    /// tests compare the fill with the template's own rendering on hostile values.
    struct RowPattern {
        enum Piece {
            case markup(String)
            case value(Row.Field)
        }

        let new: [Piece]
        let old: [Piece]

        static let byLanguage: [Language: RowPattern] = Dictionary(
            uniqueKeysWithValues: Language.allCases.map { ($0, RowPattern(Reader(language: $0))) })

        // Private-use scalars: neither the escaping nor the catalog's text ever produces them.
        static func marker(_ field: Row.Field) -> String { "\u{E000}" + field.rawValue + "\u{E001}" }

        init(_ reader: Reader) {
            new = Self.pieces(ReportPage.render(ReportPage(reader, finding: Row(markers: true))))
            old = Self.pieces(ReportPage.render(ReportPage(reader, finding: Row(markers: false))))
        }

        private static func pieces(_ rendered: String) -> [Piece] {
            var pieces: [Piece] = []
            var rest = Substring(rendered)
            while let start = rest.range(of: "\u{E000}"), let end = rest[start.upperBound...].range(of: "\u{E001}") {
                pieces.append(.markup(String(rest[..<start.lowerBound])))
                guard let field = Row.Field(rawValue: String(rest[start.upperBound..<end.lowerBound])) else {
                    preconditionFailure("report.mustache's row writes a value the row does not have")
                }
                pieces.append(.value(field))
                rest = rest[end.upperBound...]
            }
            pieces.append(.markup(String(rest)))
            return pieces
        }

        func html(_ row: Row) -> String {
            var html = ""
            html.reserveCapacity(640)
            for piece in row.isNew ? new : old {
                switch piece {
                case .markup(let markup): html += markup
                case .value(let field): html += ScalarHTMLContentType().escapeText(row[field])
                }
            }
            return html
        }
    }

    struct Foot: TemplateValues {
        let hasFindings: Bool
        let datesNote: String

        static let byName: TemplateNames<Self> = ["hasFindings": \.hasFindings, "datesNote": \.datesNote]
    }
}
