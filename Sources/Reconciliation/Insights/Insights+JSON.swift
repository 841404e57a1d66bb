import Foundation

extension Insights {
    /// SPEC section 19's object for one dimension's table: `{"span", "overall", "by", "segments"}`.
    /// Every segment lists `counts` for every kind, zeros included, as report.json does; the upload
    /// delay's values are ``UploadDelay``'s raw values, the hour's `00` … `23`.
    public func json(_ table: Table) -> String {
        let s = JSONText.string
        let segments = table.segments.map { segment in
            let counts = FindingKind.allCases.map { "\(s($0.rawValue)): \(segment.counts[$0] ?? 0)" }
            let risk = segment.valueAtRisk.map {
                "{\"kind\": \(s($0.kind.rawValue)), \"currency\": \(s($0.currency)), "
                    + "\"amount_milli\": \($0.amountMilli)}"
            }
            return """
                {"value": \(s(segment.value)), "purchases": \(segment.purchases), "leaks": \(segment.leaks), \
                "rate": \(Self.number(segment.leakRate.rate)), \
                "rate_low": \(Self.number(segment.leakRate.lowerBound)), \
                "flagged": \(segment.flagged), "counts": {\(counts.joined(separator: ", "))}, \
                "value_at_risk": [\(risk.joined(separator: ", "))]}
                """
        }
        return """
            {"span": \(spanJSON), \
            "overall": {"purchases": \(overall.purchases), "leaks": \(overall.leaks), \
            "rate": \(Self.number(overall.rate))}, \
            "by": \(s(table.dimension.rawValue)), \
            "segments": [\(segments.map { "\n  " + $0 }.joined(separator: ","))\(segments.isEmpty ? "" : "\n")]}
            """
    }

    /// `reconcile insights --json`: one dimension asked gives its object; several (or none named:
    /// every dimension) give an array of such objects, one per dimension in the order asked, each
    /// whole (span and overall repeated), so that a reader of one dimension reads any of them.
    public func json(single: Bool) -> String {
        if single, tables.count == 1 { return json(tables[0]) }
        return "[" + tables.map { json($0) }.joined(separator: ",\n") + "]"
    }

    /// `{"since", "until", "store", "run_id", "judged_before"}`: null where not set.
    var spanJSON: String {
        let s = JSONText.string
        func time(_ date: Date?) -> String { date.map { s(TimeExpression.format($0)) } ?? "null" }
        return "{\"since\": \(time(span.since)), \"until\": \(time(span.until)), "
            + "\"store\": \(span.store.map { s($0.rawValue) } ?? "null"), "
            + "\"run_id\": \(span.runID.map(String.init) ?? "null"), \"judged_before\": \(time(span.judgedBefore))}"
    }

    /// A rate as a JSON number (Swift's shortest text that reads back as the same double).
    static func number(_ value: Double) -> String { value.isFinite ? "\(value)" : "0" }
}
