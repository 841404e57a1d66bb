import Foundation

/// PostgreSQL type OIDs the wrapper decodes (from `pg_type.dat`).
public enum PostgresType {
    public static let bool: UInt32 = 16
    public static let bytea: UInt32 = 17
    public static let char: UInt32 = 18
    public static let name: UInt32 = 19
    public static let int8: UInt32 = 20
    public static let int2: UInt32 = 21
    public static let int4: UInt32 = 23
    public static let text: UInt32 = 25
    public static let oid: UInt32 = 26
    public static let json: UInt32 = 114
    public static let float4: UInt32 = 700
    public static let float8: UInt32 = 701
    public static let bpchar: UInt32 = 1042
    public static let varchar: UInt32 = 1043
    public static let date: UInt32 = 1082
    public static let timestamp: UInt32 = 1114
    public static let timestamptz: UInt32 = 1184
    public static let numeric: UInt32 = 1700
    public static let uuid: UInt32 = 2950
    public static let jsonb: UInt32 = 3802
}

/// A Swift type that a column's text can be decoded into, checked against the column's type.
public protocol PostgresDecodable {
    /// Decodes a field; `text` is nil for SQL NULL. Throws a `.decoding` error on mismatch.
    static func decode(postgresText text: String?, type: UInt32, column: String) throws -> Self
}

/// A non-optional decodable type: NULL is an error, and the column type must be one of `acceptedTypes`.
public protocol PostgresNonNullDecodable: PostgresDecodable {
    /// Column types this Swift type can be read from; empty accepts every type. Read for every
    /// field decoded: a stored set, not one built at each read.
    static var acceptedTypes: Set<UInt32> { get }
    /// Converts the text of a non-NULL field.
    static func parse(_ text: String) -> Self?
}

extension PostgresNonNullDecodable {
    public static func decode(postgresText text: String?, type: UInt32, column: String) throws -> Self {
        guard let text else {
            throw PostgresError(kind: .decoding, message: "column \(column) is NULL; decode it as an Optional")
        }
        guard acceptedTypes.isEmpty || acceptedTypes.contains(type) else {
            throw PostgresError(
                kind: .decoding, message: "column \(column) has type oid \(type), which \(Self.self) cannot hold")
        }
        guard let value = parse(text) else {
            throw PostgresError(kind: .decoding, message: "column \(column) does not hold a valid \(Self.self)")
        }
        return value
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static func decode(postgresText text: String?, type: UInt32, column: String) throws -> Self {
        guard text != nil else { return nil }
        return try Wrapped.decode(postgresText: text, type: type, column: column)
    }
}

extension String: PostgresNonNullDecodable {
    /// Text reads any column in its text form.
    public static var acceptedTypes: Set<UInt32> { [] }
    public static func parse(_ text: String) -> String? { text }
}

extension Int64: PostgresNonNullDecodable {
    public static let acceptedTypes: Set<UInt32> = [PostgresType.int8, PostgresType.int4, PostgresType.int2, PostgresType.oid]
    public static func parse(_ text: String) -> Int64? { Int64(text) }
}

extension Int: PostgresNonNullDecodable {
    public static var acceptedTypes: Set<UInt32> { Int64.acceptedTypes }
    public static func parse(_ text: String) -> Int? { Int(text) }
}

extension Int32: PostgresNonNullDecodable {
    public static let acceptedTypes: Set<UInt32> = [PostgresType.int4, PostgresType.int2]
    public static func parse(_ text: String) -> Int32? { Int32(text) }
}

extension Double: PostgresNonNullDecodable {
    public static let acceptedTypes: Set<UInt32> = [
        PostgresType.float8, PostgresType.float4, PostgresType.numeric, PostgresType.int8, PostgresType.int4,
    ]
    public static func parse(_ text: String) -> Double? { Double(text) }
}

extension Bool: PostgresNonNullDecodable {
    public static let acceptedTypes: Set<UInt32> = [PostgresType.bool]
    public static func parse(_ text: String) -> Bool? {
        switch text {
        case "t": true
        case "f": false
        default: nil
        }
    }
}

extension UUID: PostgresNonNullDecodable {
    public static let acceptedTypes: Set<UInt32> = [PostgresType.uuid]
    public static func parse(_ text: String) -> UUID? { UUID(uuidString: text) }
}

extension Date: PostgresNonNullDecodable {
    public static let acceptedTypes: Set<UInt32> = [PostgresType.timestamptz, PostgresType.timestamp, PostgresType.date]
    public static func parse(_ text: String) -> Date? { PostgresTimestamp.parse(text) }
}

extension PostgresJSON: PostgresNonNullDecodable {
    public static let acceptedTypes: Set<UInt32> = [PostgresType.json, PostgresType.jsonb]
    public static func parse(_ text: String) -> PostgresJSON? { PostgresJSON(text) }
}

extension Data: PostgresNonNullDecodable {
    public static let acceptedTypes: Set<UInt32> = [PostgresType.bytea]
    public static func parse(_ text: String) -> Data? {
        guard text.hasPrefix("\\x") else { return nil }
        var data = Data(capacity: (text.utf8.count - 2) / 2)
        var high: UInt8?
        for byte in text.utf8.dropFirst(2) {
            let nibble: UInt8
            switch byte {
            case 48...57: nibble = byte - 48
            case 97...102: nibble = byte - 87
            case 65...70: nibble = byte - 55
            default: return nil
            }
            if let pending = high {
                data.append(pending << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? data : nil
    }
}

extension PostgresNonNullDecodable where Self: RawRepresentable, RawValue == String {
    /// A typed code reads any column in its text form, like `String`.
    public static var acceptedTypes: Set<UInt32> { [] }
    /// Nil (a decoding error) only when the type refuses the text, as a closed enum does.
    public static func parse(_ text: String) -> Self? { Self(rawValue: text) }
}
