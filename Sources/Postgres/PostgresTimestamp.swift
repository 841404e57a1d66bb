import CivilCalendar
import Foundation

/// Reads and writes PostgreSQL's ISO timestamps without `DateFormatter`, which is slow and
/// locale-sensitive. Connections run with `TimeZone=UTC` and `DateStyle=ISO`.
enum PostgresTimestamp {
    /// Formats a date as `2026-11-22T02:00:00.123456Z`.
    static func format(_ date: Date) -> String {
        // Foundation's distant dates are Julian-calendar instants outside PostgreSQL's years.
        if date <= .distantPast { return "-infinity" }
        if date >= .distantFuture { return "infinity" }
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard micros.isFinite, abs(micros) < 9e18 else { return micros < 0 ? "-infinity" : "infinity" }
        let total = Int64(micros)
        var seconds = total / 1_000_000
        var fraction = total % 1_000_000
        if fraction < 0 {
            fraction += 1_000_000
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = CivilCalendar.date(days: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
        text += "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if fraction != 0 { text += "." + pad(fraction, 6) }
        return text + "Z"
    }

    /// Parses `2026-11-22 02:00:00.123456+00` (also with `T`, `Z`, `+05:30`, or a bare date).
    static func parse(_ text: String) -> Date? {
        if text == "infinity" { return .distantFuture }
        if text == "-infinity" { return .distantPast }
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int64? {
            guard index + width <= bytes.count else { return nil }
            var value: Int64 = 0
            for offset in 0..<width {
                let byte = bytes[index + offset]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += width
            return value
        }
        func expect(_ options: [UInt8]) -> Bool {
            guard index < bytes.count, options.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect([45]), let month = number(2), expect([45]), let day = number(2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var seconds = CivilCalendar.days(year: year, month: month, day: day) * 86_400
        var fraction = 0.0
        if index < bytes.count {
            guard expect([32, 84]), let hour = number(2), expect([58]), let minute = number(2), expect([58]),
                let second = number(2), hour < 24, minute < 60, second < 61
            else { return nil }
            seconds += hour * 3600 + minute * 60 + second
            if index < bytes.count, bytes[index] == 46 {
                index += 1
                var scale = 0.1
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                    fraction += Double(bytes[index] - 48) * scale
                    scale /= 10
                    index += 1
                }
            }
            if index < bytes.count {
                if bytes[index] == 90 {  // Z
                    index += 1
                } else {
                    let sign: Int64 = bytes[index] == 45 ? -1 : 1
                    guard expect([43, 45]), let offsetHours = number(2) else { return nil }
                    var offset = offsetHours * 3600
                    if index < bytes.count, bytes[index] == 58 { index += 1 }
                    if index < bytes.count, let offsetMinutes = number(2) { offset += offsetMinutes * 60 }
                    if index < bytes.count, bytes[index] == 58 { index += 1 }
                    if index < bytes.count, let offsetSeconds = number(2) { offset += offsetSeconds }
                    seconds -= sign * offset
                }
            }
        }
        guard index == bytes.count else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }
}
