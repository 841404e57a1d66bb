import Foundation

/// A Swift value that can be bound as a query parameter, in PostgreSQL's text format.
public protocol PostgresEncodable {
    /// The parameter's text, or nil for SQL NULL.
    var postgresText: String? { get }
}

extension String: PostgresEncodable {
    public var postgresText: String? { self }
}

extension Substring: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension Int: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension Int64: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension Int32: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension Double: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension Bool: PostgresEncodable {
    public var postgresText: String? { self ? "t" : "f" }
}

extension UUID: PostgresEncodable {
    public var postgresText: String? { uuidString.lowercased() }
}

extension Date: PostgresEncodable {
    /// RFC 3339 in UTC with microseconds, the precision of `timestamptz`.
    public var postgresText: String? { PostgresTimestamp.format(self) }
}

extension Data: PostgresEncodable {
    /// `bytea` hex format.
    public var postgresText: String? {
        var text = "\\x"
        text.reserveCapacity(2 + count * 2)
        let digits = Array("0123456789abcdef")
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return text
    }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public var postgresText: String? { self.flatMap { $0.postgresText } }
}

/// SQL NULL as a parameter, for places where no typed optional is at hand.
public struct PostgresNull: PostgresEncodable, Sendable {
    /// Creates a NULL parameter.
    public init() {}
    public var postgresText: String? { nil }
}

/// A JSON document bound or read as text (`json`/`jsonb`).
public struct PostgresJSON: PostgresEncodable, Sendable, Equatable {
    /// The JSON text.
    public var text: String

    /// Wraps JSON text.
    public init(_ text: String) { self.text = text }

    /// Encodes a value with `JSONEncoder` (sorted keys, so equal values give equal text).
    public init<T: Encodable>(encoding value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        text = String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Decodes the document with `JSONDecoder`.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(text.utf8))
    }

    public var postgresText: String? { text }
}

extension Array: PostgresEncodable where Element: PostgresEncodable {
    /// A one-dimensional array literal (`{"a","b",NULL}`), for `= ANY($1::text[])`.
    public var postgresText: String? {
        PostgresLiteral.quoted(lazy.map(\.postgresText), open: "{", close: "}", null: "NULL")
    }
}

/// The text form PostgreSQL reads for an array (`{…}`) and a composite (`(…)`): every element
/// that is not null quoted, `"` and `\` escaped with a backslash, nulls as `null` says.
/// Written byte by byte: the receiver binds arrays of notification bodies (tens of KB each),
/// where `replacingOccurrences` twice per element cost more than the rest of the binding.
enum PostgresLiteral {
    static func quoted(
        _ texts: some Sequence<String?>, open: Unicode.Scalar, close: Unicode.Scalar, null: String
    ) -> String {
        var literal: [UInt8] = [UInt8(ascii: open)]
        for (index, element) in texts.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard var text = element else {
                literal.append(contentsOf: null.utf8)
                continue
            }
            literal.append(UInt8(ascii: "\""))
            text.withUTF8 { bytes in
                for byte in bytes {
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { literal.append(UInt8(ascii: "\\")) }
                    literal.append(byte)
                }
            }
            literal.append(UInt8(ascii: "\""))
        }
        literal.append(UInt8(ascii: close))
        return String(decoding: literal, as: UTF8.self)
    }
}

extension PostgresEncodable where Self: RawRepresentable, RawValue == String {
    /// A typed code (an extensible `RawRepresentable` struct or a `String` enum) binds as its raw text.
    public var postgresText: String? { rawValue }
}

/// A composite value (a row of a `CREATE TYPE … AS (…)` type) bound as one parameter, in
/// PostgreSQL's text form: `("a",,"{""x""}")`, its fields in the type's order, nil ones null.
/// Bound as `$1::schema.type`, the statement's plan sees a constant, and an inlined SQL function
/// reading its fields is folded as if each field had been bound alone.
public struct PostgresRecord: PostgresEncodable, Sendable, Equatable {
    /// The fields' texts, in order; nil is null.
    public let fields: [String?]

    /// A record of these values, in the type's order.
    public init(_ values: [any PostgresEncodable]) {
        fields = values.map(\.postgresText)
    }

    /// Every field that is not null is quoted, `"` and `\` escaped with a backslash: an empty
    /// text stays distinct from null (an unquoted empty field).
    public var postgresText: String? { PostgresLiteral.quoted(fields, open: "(", close: ")", null: "") }
}
