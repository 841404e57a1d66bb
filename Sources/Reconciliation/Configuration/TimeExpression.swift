import Foundation

/// The time arguments of `reconcile run --since/--until` (SPEC section 7) and durations.
public enum TimeExpression {
    /// Parses a date (`2026-11-01`, UTC midnight), an RFC 3339 timestamp (`2026-11-01T02:00:00Z`,
    /// `…+08:00`), or a duration back from `now` (`36h`, `7d`).
    /// Instants from years 1 to 9999 only: PostgreSQL and the reports take them all.
    public static func instant(_ text: String, now: Date) -> Date? {
        guard let date = parsedInstant(text, now: now), date >= earliest, date < latest else { return nil }
        return date
    }

    private static let earliest = Date(timeIntervalSince1970: -62_135_596_800)  // 0001-01-01
    private static let latest = Date(timeIntervalSince1970: 253_402_300_800)  // 10000-01-01

    private static func parsedInstant(_ text: String, now: Date) -> Date? {
        if let seconds = duration(text) { return now.addingTimeInterval(-seconds) }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        if parts.count == 3, parts.allSatisfy({ $0.allSatisfy(\.isNumber) }), parts[0].count == 4,
            parts[1].count == 2, parts[2].count == 2
        {
            return rfc3339(text + "T00:00:00Z")
        }
        return rfc3339(text)
    }

    /// The longest duration accepted: a century. Anything longer is a typo, and an unbounded
    /// one (`1e300w`) would overflow the microseconds a timestamp is sent to PostgreSQL in.
    public static let maximumDuration: TimeInterval = 100 * 366 * 86_400

    /// Parses `90s`, `30m`, `36h`, `7d`, `2w` (or a bare number of seconds) into seconds; nil
    /// beyond ``maximumDuration``.
    public static func duration(_ text: String) -> TimeInterval? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let unit = trimmed.last else { return nil }
        let multipliers: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        var seconds: TimeInterval?
        if let multiplier = multipliers[unit], let number = Double(trimmed.dropLast()), number >= 0,
            number.isFinite
        {
            seconds = number * multiplier
        } else if let number = Double(trimmed), number >= 0, number.isFinite,
            trimmed.allSatisfy({ $0.isNumber || $0 == "." })
        {
            seconds = number
        }
        guard let seconds, seconds <= maximumDuration else { return nil }
        return seconds
    }

    /// Parses RFC 3339 with or without fractional seconds.
    public static func rfc3339(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }

    /// Formats an instant as RFC 3339 in UTC, whole seconds (`2026-11-22T02:00:00Z`).
    public static func format(_ date: Date) -> String {
        // A format style, not an ISO8601DateFormatter: making the formatter (ICU underneath) cost
        // more than the rest of a report row, and the HTML report formats a date in every row.
        internetDateTime.format(date)
    }

    private static let internetDateTime = Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0)!)
}
