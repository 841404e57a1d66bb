import Foundation

/// verifyReceipt writes almost every number as a string ("quantity": "1"), but not all of them
/// (`adam_id`, `app_item_id` are JSON numbers) and not always the same way across its history, so
/// every scalar is read as "whatever JSON type it came in" and converted here.
extension KeyedDecodingContainer {
    /// The value as text, whether Apple sent a string, a number or a boolean.
    func lenientString(_ key: Key) throws -> String? {
        // One lookup for the usual case (a string, or absent, or null); the other JSON types only
        // when it is not a string.
        do {
            return try decodeIfPresent(String.self, forKey: key)
        } catch DecodingError.typeMismatch {
        }
        if let integer = try? decode(Int64.self, forKey: key) { return String(integer) }
        if let number = try? decode(Double.self, forKey: key) { return String(number) }
        if let flag = try? decode(Bool.self, forKey: key) { return flag ? "true" : "false" }
        throw DecodingError.typeMismatch(
            String.self,
            .init(codingPath: codingPath + [key], debugDescription: "expected a string, number or boolean"))
    }

    /// An integer sent as `"1"` or `1`.
    func lenientInt64(_ key: Key) throws -> Int64? {
        guard let text = try lenientString(key) else { return nil }
        guard let value = Int64(text.trimmingCharacters(in: .whitespaces)) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "not an integer: \(text.prefix(40))")
        }
        return value
    }

    /// A boolean sent as `"true"`/`"false"`, `"1"`/`"0"`, or a JSON boolean.
    func lenientBool(_ key: Key) throws -> Bool? {
        guard let text = try lenientString(key) else { return nil }
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default:
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "not a boolean: \(text.prefix(40))")
        }
    }

    /// A date sent as epoch milliseconds in a string (`purchase_date_ms`).
    func lenientMillisecondsDate(_ key: Key) throws -> Date? {
        guard let text = try lenientString(key) else { return nil }
        // Xcode and a few old responses carry fractional milliseconds; Double keeps them.
        guard let milliseconds = Double(text.trimmingCharacters(in: .whitespaces)) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "not epoch milliseconds: \(text.prefix(40))")
        }
        return Date(timeIntervalSince1970: milliseconds / 1000)
    }
}

/// A coding key made from any string, for reading JSON whose keys are only known at run time.
struct AppleCodingKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

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
