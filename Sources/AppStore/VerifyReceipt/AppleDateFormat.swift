import Foundation

/// Formats dates the way verifyReceipt does, so that `--json` output reads like Apple's.
enum AppleDateFormat {
    /// Epoch milliseconds as a string: `"1595439548000"`.
    static func milliseconds(_ date: Date) -> String {
        String(Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// `2020-07-22 17:39:08 Etc/GMT`.
    static func gmt(_ date: Date) -> String {
        format(date, timeZone: TimeZone(identifier: "UTC")!, suffix: "Etc/GMT")
    }

    /// `2020-07-22 10:39:08 America/Los_Angeles`.
    static func pacific(_ date: Date) -> String {
        let zone = TimeZone(identifier: "America/Los_Angeles") ?? TimeZone(identifier: "UTC")!
        return format(date, timeZone: zone, suffix: zone.identifier)
    }

    private static func format(_ date: Date, timeZone: TimeZone, suffix: String) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        // Padded by hand: String(format:) costs more than the calendar arithmetic on Linux.
        func pad(_ value: Int?, _ width: Int) -> String {
            let digits = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2)) "
            + "\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2)) \(suffix)"
    }
}
