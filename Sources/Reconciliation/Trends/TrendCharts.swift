import Foundation

/// One trend chart as the pages and report.html show it: a server-drawn SVG bar chart (no script),
/// readable without colour (one ink, series told apart by fill patterns named in a legend), and the
/// same numbers as a table beside it. Every word comes from the catalog.
public struct TrendChart: Sendable, Equatable {
    /// Unique on the page (the SVG's pattern ids and the table's id derive from it).
    public var id: String
    public var title: String
    /// The whole SVG element, its text escaped.
    public var svg: String
    public var headers: [String]
    /// The days that have something, oldest first, formatted.
    public var rows: [[String]]
}

/// The trend charts of SPEC section 19 from ``Trends``.
public enum TrendCharts {
    /// A series' fill: the ink solid, hatched or dotted.
    enum Pattern: String, CaseIterable { case solid, hatch, dots }

    struct Series {
        var label: String
        var pattern: Pattern
        /// One value per day of the span; nil: nothing that day (no bar, no table row).
        var values: [Double?]
    }

    /// Every chart, in the order SPEC section 19 lists them; `prefix` makes the ids unique on a page.
    public static func charts(_ trends: Trends, reader: Reader, prefix: String = "trend") -> [TrendChart] {
        let t = reader.catalog
        let days = trends.days
        func nightly(_ value: (Trends.Night) -> Double) -> [Double?] { days.map { trends.nights[$0].map(value) } }
        func count(_ value: Double) -> String { reader.number(Int(value.rounded())) }
        var charts: [TrendChart] = []

        // New findings per night, stacked by severity; the table by kind.
        let severities: [(Severity, Pattern)] = [(.high, .solid), (.medium, .hatch), (.low, .dots)]
        let newSeries = severities.map { severity, pattern in
            Series(label: t.severity(severity), pattern: pattern, values: nightly { night in
                Double(night.newByKind.filter { $0.key.severity == severity }.values.reduce(0, +))
            })
        }
        let kinds = FindingKind.allCases.filter { kind in trends.nights.values.contains { ($0.newByKind[kind] ?? 0) > 0 } }
        charts.append(chart(
            id: "\(prefix)-new", title: t["trends.new_findings"], days: days, series: newSeries, stacked: true,
            format: count, reader: reader,
            headers: [t["trends.day"], t["trends.total"]] + kinds.map(t.kind),
            row: { day in
                trends.nights[day].map { night in
                    [reader.number(night.newFindings)] + kinds.map { reader.number(night.newByKind[$0] ?? 0) }
                }
            }))

        charts.append(chart(
            id: "\(prefix)-open", title: t["trends.open_items"], days: days,
            series: [Series(label: t["trends.open_items"], pattern: .solid, values: nightly { Double($0.openItems) })],
            stacked: false, format: count, reader: reader, headers: [t["trends.day"], t["trends.open_items"]],
            row: { day in trends.nights[day].map { [reader.number($0.openItems)] } }))

        for currency in trends.currencies {
            func money(_ value: Double) -> String { reader.money(milli: Int64(value.rounded()), currency: currency) }
            charts.append(chart(
                id: "\(prefix)-risk-\(currency.lowercased())",
                title: t.text("trends.value_at_risk", ["currency": currency]), days: days,
                series: [Series(label: currency, pattern: .solid, values: nightly { Double($0.facts.valueAtRisk[currency] ?? 0) })],
                stacked: false, format: money, reader: reader,
                headers: [t["trends.day"], t.text("trends.value_at_risk", ["currency": currency])],
                row: { day in trends.nights[day].map { [money(Double($0.facts.valueAtRisk[currency] ?? 0))] } }))
        }

        func percent(_ value: Double) -> String { String(format: "%.1f%%", value) }
        // The refund rate only when it was read (the Insights page; not a run's report.html).
        if let purchaseDays = trends.purchaseDays {
            charts.append(chart(
                id: "\(prefix)-refund-rate", title: t["trends.refund_rate"], days: days,
                series: [Series(label: t["trends.refund_rate"], pattern: .solid,
                                values: days.map { purchaseDays[$0].map(\.percentRevoked) })],
                stacked: false, format: percent, reader: reader,
                headers: [t["trends.purchase_day"], t["trends.purchases"], t["trends.revoked"], t["trends.rate"]],
                row: { day in
                    purchaseDays[day].map {
                        [reader.number($0.purchases), reader.number($0.revoked), percent($0.percentRevoked)]
                    }
                }))
        }

        charts.append(chart(
            id: "\(prefix)-play-voids", title: t["trends.unacknowledged_voids"], days: days,
            series: [Series(label: t["trends.unacknowledged_voids"], pattern: .solid,
                            values: nightly { Double($0.facts.voidedUnacknowledged) })],
            stacked: false, format: count, reader: reader, headers: [t["trends.day"], t["trends.unacknowledged_voids"]],
            row: { day in trends.nights[day].map { [reader.number($0.facts.voidedUnacknowledged)] } }))

        let outcomes: [(String, Pattern, (RunTrendFacts.RefundRequests) -> Int)] = [
            (t["trends.answered"], .solid, \.answered), (t["trends.refunded"], .hatch, \.refunded),
            (t["trends.declined"], .dots, \.declined),
        ]
        charts.append(chart(
            id: "\(prefix)-refund-requests", title: t["trends.refund_requests"], days: days,
            series: outcomes.map { label, pattern, value in
                Series(label: label, pattern: pattern, values: nightly { Double(value($0.facts.refundRequests)) })
            },
            stacked: false, format: count, reader: reader, headers: [t["trends.day"]] + outcomes.map(\.0),
            row: { day in
                trends.nights[day].map { night in outcomes.map { reader.number($0.2(night.facts.refundRequests)) } }
            }))
        return charts
    }

    static func chart(
        id: String, title: String, days: [Date], series: [Series], stacked: Bool, format: (Double) -> String,
        reader: Reader, headers: [String], row: (Date) -> [String]?
    ) -> TrendChart {
        TrendChart(
            id: id, title: title,
            svg: svg(id: id, title: title, days: days, series: series, stacked: stacked, format: format, reader: reader),
            headers: headers,
            rows: days.compactMap { day in row(day).map { [reader.day(day)] + $0 } })
    }

    // MARK: Drawing

    static let width = 720.0, height = 220.0
    static let left = 72.0, right = 12.0, bottom = 34.0
    static let ink = "#222", paper = "#fff", grid = "#999"

    /// The SVG of a bar chart: a bar (or a stack, or a group) per day, three labelled gridlines, the
    /// first, middle and last days under the axis, a legend when there are several series.
    static func svg(
        id: String, title: String, days: [Date], series: [Series], stacked: Bool, format: (Double) -> String,
        reader: Reader
    ) -> String {
        let top = series.count > 1 ? 34.0 : 14.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let totals = days.indices.map { index in
            stacked ? series.reduce(0) { $0 + ($1.values[index] ?? 0) } : series.map { $0.values[index] ?? 0 }.max() ?? 0
        }
        let maximum = niceCeiling(totals.max() ?? 0)
        func y(_ value: Double) -> Double { top + plotHeight - (maximum == 0 ? 0 : value / maximum * plotHeight) }
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        let escaped = HTMLText.escape(title)
        var parts: [String] = [
            #"<svg xmlns="http://www.w3.org/2000/svg" class="trend-chart" viewBox="0 0 \#(Int(width)) \#(Int(height))" role="img" aria-labelledby="\#(id)-title" aria-describedby="\#(id)-table">"#,
            "<title id=\"\(id)-title\">\(escaped)</title>",
            "<defs>",
            #"<pattern id="\#(id)-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="\#(paper)"/><rect width="2.5" height="6" fill="\#(ink)"/></pattern>"#,
            #"<pattern id="\#(id)-dots" width="5" height="5" patternUnits="userSpaceOnUse"><rect width="5" height="5" fill="\#(paper)"/><circle cx="2.5" cy="2.5" r="1.2" fill="\#(ink)"/></pattern>"#,
            "</defs>",
        ]
        func fill(_ pattern: Pattern) -> String { pattern == .solid ? ink : "url(#\(id)-\(pattern.rawValue))" }
        // Gridlines at 0, half and the top, labelled on the left.
        for fraction in [0.0, 0.5, 1.0] {
            let value = maximum * fraction
            parts.append(#"<line x1="\#(number(left))" x2="\#(number(width - right))" y1="\#(number(y(value)))" y2="\#(number(y(value)))" stroke="\#(grid)" stroke-width="\#(fraction == 0 ? 1 : 0.5)"/>"#)
            parts.append(#"<text x="\#(number(left - 6))" y="\#(number(y(value) + 4))" text-anchor="end" font-size="11">\#(HTMLText.escape(format(value)))</text>"#)
        }
        let slot = days.isEmpty ? plotWidth : plotWidth / Double(days.count)
        for (index, _) in days.enumerated() {
            let x = left + Double(index) * slot + slot * 0.1
            let width = slot * 0.8
            if stacked {
                var base = 0.0
                for one in series {
                    guard let value = one.values[index], value > 0 else { continue }
                    parts.append(bar(x: x, width: width, from: y(base), to: y(base + value), fill: fill(one.pattern)))
                    base += value
                }
            } else {
                let each = width / Double(max(1, series.count))
                for (position, one) in series.enumerated() {
                    guard let value = one.values[index], value > 0 else { continue }
                    parts.append(bar(x: x + Double(position) * each, width: each, from: y(0), to: y(value), fill: fill(one.pattern)))
                }
            }
        }
        // The first, middle and last days.
        for index in Set([0, days.count / 2, days.count - 1]).filter({ $0 >= 0 && $0 < days.count }).sorted() {
            let x = left + (Double(index) + 0.5) * slot
            let anchor = index == 0 ? "start" : index == days.count - 1 ? "end" : "middle"
            parts.append(#"<text x="\#(number(index == 0 ? left : index == days.count - 1 ? width - right : x))" y="\#(number(height - bottom + 16))" text-anchor="\#(anchor)" font-size="11">\#(HTMLText.escape(reader.day(days[index])))</text>"#)
        }
        if series.count > 1 {
            var x = left
            for one in series {
                parts.append(#"<rect x="\#(number(x))" y="8" width="14" height="14" fill="\#(fill(one.pattern))" stroke="\#(ink)"/>"#)
                parts.append(#"<text x="\#(number(x + 20))" y="19" font-size="12">\#(HTMLText.escape(one.label))</text>"#)
                x += 28 + Double(one.label.count) * 8
            }
        }
        parts.append("</svg>")
        return parts.joined()
    }

    static func bar(x: Double, width: Double, from bottom: Double, to top: Double, fill: String) -> String {
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        return #"<rect x="\#(number(x))" y="\#(number(top))" width="\#(number(max(width, 0.5)))" height="\#(number(max(bottom - top, 0.5)))" fill="\#(fill)" stroke="\#(ink)" stroke-width="0.5"/>"#
    }

    /// The axis's top: 1, 2 or 5 times a power of ten at or above `value` (1 for nothing at all).
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let power = pow(10, floor(log10(value)))
        return [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= value } ?? value
    }
}
