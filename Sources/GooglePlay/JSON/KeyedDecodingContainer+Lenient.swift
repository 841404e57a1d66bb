import Foundation

extension KeyedDecodingContainer {
    /// An integer Google sends as a number or, for its int64 fields (`purchaseTimeMillis`,
    /// `voidedTimeMillis`, `units`), as a string of digits; nil when absent, null or neither.
    func lenientInt64(_ key: Key) -> Int64? {
        if let number = try? decodeIfPresent(Int64.self, forKey: key) { return number }
        if let text = try? decodeIfPresent(String.self, forKey: key) { return Int64(text) }
        return nil
    }

    /// ``lenientInt64(_:)`` as an `Int`.
    func lenientInt(_ key: Key) -> Int? {
        lenientInt64(key).flatMap { Int(exactly: $0) }
    }

    /// A string, nil when absent, null or of another type.
    func lenientString(_ key: Key) -> String? {
        (try? decodeIfPresent(String.self, forKey: key)) ?? nil
    }

    /// A nested value, nil when absent or not of its shape.
    func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }
}

/// Google's timestamps: RFC 3339, Z-normalised, with 0, 3, 6 or 9 fractional digits.
enum GoogleTimestamp {
    static func date(_ text: String?) -> Date? {
        guard let text else { return nil }
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let whole = Date.ISO8601FormatStyle()
        if let date = try? fractional.parse(text) { return date }
        if let date = try? whole.parse(text) { return date }
        // More than three fractional digits: keep milliseconds, which is all the ledger holds.
        if let dot = text.firstIndex(of: "."), let end = text[dot...].firstIndex(where: { !$0.isNumber && $0 != "." }) {
            let digits = text[text.index(after: dot)..<end]
            if digits.count > 3 {
                return try? fractional.parse(String(text[..<dot]) + "." + String(digits.prefix(3)) + String(text[end...]))
            }
        }
        return nil
    }
}
