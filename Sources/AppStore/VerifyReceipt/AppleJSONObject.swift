import Foundation

/// The names of one kind of object in a verifyReceipt answer, Apple's spelling as raw values.
protocol AppleFieldName: RawRepresentable<String>, CaseIterable, Equatable, Sendable {
    /// The names by their bytes, for the direct reader: `static let keys = DirectJSON.Keys(Self.self)`.
    static var keys: DirectJSON.Keys<Self> { get }
}

extension DirectJSON.Keys where Name: AppleFieldName {
    init(_ names: Name.Type) { self.init(Name.allCases.map { ($0.rawValue, $0) }) }
}

/// One object of a verifyReceipt answer as the types of ``VerifiedReceipt`` read it: through
/// `JSONDecoder` (``DecodedAppleObject``, the reference) or through the direct reader
/// (``DirectAppleObject``). Both build every value with the same code, each type's
/// `init(fields:)`, so the direct reader can differ from `JSONDecoder` only in how it reads JSON,
/// and it leaves to `JSONDecoder` whatever it is not certain of.
protocol AppleJSONObject<Field> {
    associatedtype Field: AppleFieldName

    /// The member as text, whether Apple sent a string, a number or a boolean; nil when it is
    /// absent or null.
    func lenientString(_ field: Field) throws -> String?
    /// The member read as a `T`; nil when it is absent or null.
    func object<T: AppleJSONDecodable>(_ field: Field, as type: T.Type) throws -> T?
    /// The member read as an array of `T`; nil when it is absent or null.
    func array<T: AppleJSONDecodable>(_ field: Field, of type: T.Type) throws -> [T]?
    /// The member read as an array of `T`, or as one `T` (iOS 6 style responses send
    /// `latest_receipt_info` as one object); empty when it is absent or null.
    func oneOrMany<T: AppleJSONDecodable>(_ field: Field, of type: T.Type) throws -> [T]
    /// This same object read as a `T` (an iOS 6 style receipt is its own transaction).
    func whole<T: AppleJSONDecodable>(as type: T.Type) throws -> T
    /// The error for a member that must be there and is not.
    func missing(_ field: Field, _ description: String) -> any Error
    /// The error for a member whose text is not what it must be.
    func corrupted(_ field: Field, _ description: String) -> any Error
}

/// A type read from one object of a verifyReceipt answer, by `JSONDecoder` (its `init(from:)`
/// is the one below) or directly.
protocol AppleJSONDecodable: Decodable {
    associatedtype Field: AppleFieldName
    init(fields: some AppleJSONObject<Field>) throws
}

extension AppleJSONDecodable {
    /// Reads the object the way Apple writes it: any number possibly a string, unknown fields ignored.
    public init(from decoder: any Decoder) throws { try self.init(fields: DecodedAppleObject(decoder)) }

    /// `json` read by the direct reader; nil when it leaves it to `JSONDecoder`.
    static func directly(from json: UnsafeBufferPointer<UInt8>) -> Self? {
        DirectAppleObject<Field>.read(Self.self, from: json)
    }
}

/// verifyReceipt writes almost every number as a string ("quantity": "1"), but not all of them
/// (`adam_id`, `app_item_id` are JSON numbers) and not always the same way across its history, so
/// every scalar is read as text (``AppleJSONObject/lenientString(_:)``) and converted here.
extension AppleJSONObject {
    /// An integer sent as `"1"` or `1`.
    func lenientInt64(_ field: Field) throws -> Int64? {
        guard let text = try lenientString(field) else { return nil }
        guard let value = Int64(Self.trimmed(text)) else {
            throw corrupted(field, "not an integer: \(text.prefix(40))")
        }
        return value
    }

    /// A boolean sent as `"true"`/`"false"`, `"1"`/`"0"`, or a JSON boolean.
    func lenientBool(_ field: Field) throws -> Bool? {
        guard let text = try lenientString(field) else { return nil }
        switch text {
        case "true", "1": return true
        case "false", "0": return false
        default: break
        }
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw corrupted(field, "not a boolean: \(text.prefix(40))")
        }
    }

    /// A date sent as epoch milliseconds in a string (`purchase_date_ms`).
    func lenientMillisecondsDate(_ field: Field) throws -> Date? {
        guard let text = try lenientString(field) else { return nil }
        // Xcode and a few old responses carry fractional milliseconds; Double keeps them.
        guard let milliseconds = Double(Self.trimmed(text)) else {
            throw corrupted(field, "not epoch milliseconds: \(text.prefix(40))")
        }
        return Date(timeIntervalSince1970: milliseconds / 1000)
    }

    /// `text.trimmingCharacters(in: .whitespaces)`, without asking `CharacterSet` about text that
    /// starts and ends with ASCII other than a space or a tab (the only ASCII in `.whitespaces`),
    /// which trimming leaves as it is: every number Apple sends.
    private static func trimmed(_ text: String) -> String {
        func plain(_ byte: UInt8?) -> Bool { byte.map { $0 < 0x80 && $0 != 0x20 && $0 != 0x09 } ?? false }
        guard plain(text.utf8.first), plain(text.utf8.last) else { return text.trimmingCharacters(in: .whitespaces) }
        return text
    }
}

/// An object of a verifyReceipt answer as `JSONDecoder` reads it.
struct DecodedAppleObject<Field: AppleFieldName>: AppleJSONObject {
    private let decoder: any Decoder
    private let container: KeyedDecodingContainer<AppleCodingKey>

    init(_ decoder: any Decoder) throws {
        self.decoder = decoder
        container = try decoder.container(keyedBy: AppleCodingKey.self)
    }

    private func key(_ field: Field) -> AppleCodingKey { AppleCodingKey(field.rawValue) }

    func lenientString(_ field: Field) throws -> String? {
        let key = key(field)
        // One lookup for the usual case (a string, or absent, or null); the other JSON types only
        // when it is not a string.
        do {
            return try container.decodeIfPresent(String.self, forKey: key)
        } catch DecodingError.typeMismatch {
        }
        if let integer = try? container.decode(Int64.self, forKey: key) { return String(integer) }
        if let number = try? container.decode(Double.self, forKey: key) { return String(number) }
        if let flag = try? container.decode(Bool.self, forKey: key) { return flag ? "true" : "false" }
        throw DecodingError.typeMismatch(
            String.self,
            .init(codingPath: container.codingPath + [key], debugDescription: "expected a string, number or boolean"))
    }

    func object<T: AppleJSONDecodable>(_ field: Field, as type: T.Type) throws -> T? {
        try container.decodeIfPresent(T.self, forKey: key(field))
    }

    func array<T: AppleJSONDecodable>(_ field: Field, of type: T.Type) throws -> [T]? {
        try container.decodeIfPresent([T].self, forKey: key(field))
    }

    func oneOrMany<T: AppleJSONDecodable>(_ field: Field, of type: T.Type) throws -> [T] {
        let key = key(field)
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return [] }
        if let many = try? container.decode([T].self, forKey: key) { return many }
        return [try container.decode(T.self, forKey: key)]
    }

    func whole<T: AppleJSONDecodable>(as type: T.Type) throws -> T { try T(from: decoder) }

    func missing(_ field: Field, _ description: String) -> any Error {
        DecodingError.keyNotFound(key(field), .init(codingPath: container.codingPath, debugDescription: description))
    }

    func corrupted(_ field: Field, _ description: String) -> any Error {
        DecodingError.dataCorruptedError(forKey: key(field), in: container, debugDescription: description)
    }
}

/// An object of a verifyReceipt answer read by ``DirectJSON``: the values of its known members,
/// found by their bytes; other members are ignored, as `JSONDecoder` ignores them.
///
/// Anything that is not plainly read the way `JSONDecoder` reads it (a key given twice, a member
/// of another JSON type than the one read, any error) marks the whole reading as given up, even
/// where the type's code goes on after it (`try?`), and the caller decodes with `JSONDecoder`.
struct DirectAppleObject<Field: AppleFieldName>: AppleJSONObject {
    private struct GaveUp: Error {}

    private let bytes: UnsafeBufferPointer<UInt8>
    private let attempt: DirectReadAttempt
    private let values: [(field: Field, value: DirectJSON.Value)]

    /// The object in `bytes` (valid while the object is used); nil when the reader gave up.
    private init?(_ bytes: UnsafeBufferPointer<UInt8>, attempt: DirectReadAttempt) {
        var values: [(field: Field, value: DirectJSON.Value)] = []
        let complete = DirectJSON.members(of: bytes, nested: true) { key, value in
            guard let field = Field.keys(key) else { return true }
            guard !values.contains(where: { $0.field == field }) else { return false }
            values.append((field, value))
            return true
        }
        guard complete else {
            attempt.gaveUp = true
            return nil
        }
        self.bytes = bytes
        self.attempt = attempt
        self.values = values
    }

    /// `json` read as a `T`; nil when the direct reader leaves it to `JSONDecoder`.
    static func read<T: AppleJSONDecodable>(_ type: T.Type, from json: UnsafeBufferPointer<UInt8>) -> T?
    where T.Field == Field {
        let attempt = DirectReadAttempt()
        guard let object = DirectAppleObject(json, attempt: attempt), let value = try? T(fields: object),
            !attempt.gaveUp
        else { return nil }
        return value
    }

    private func value(_ field: Field) -> DirectJSON.Value? {
        values.first { $0.field == field }?.value
    }

    private func giveUp() -> any Error {
        attempt.gaveUp = true
        return GaveUp()
    }

    func lenientString(_ field: Field) throws -> String? {
        switch value(field) {
        case nil, .null: return nil
        case .string(let text): return String(decoding: text, as: UTF8.self)
        case .integer(let number): return String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .object, .array: throw giveUp()
        }
    }

    func object<T: AppleJSONDecodable>(_ field: Field, as type: T.Type) throws -> T? {
        switch value(field) {
        case nil, .null: return nil
        case .object(let object): return try nested(object, as: T.self)
        default: throw giveUp()
        }
    }

    func array<T: AppleJSONDecodable>(_ field: Field, of type: T.Type) throws -> [T]? {
        switch value(field) {
        case nil, .null: return nil
        case .array(let array): return try elements(array, of: T.self)
        default: throw giveUp()
        }
    }

    func oneOrMany<T: AppleJSONDecodable>(_ field: Field, of type: T.Type) throws -> [T] {
        switch value(field) {
        case nil, .null: return []
        case .array(let array): return try elements(array, of: T.self)
        case .object(let object): return [try nested(object, as: T.self)]
        default: throw giveUp()
        }
    }

    func whole<T: AppleJSONDecodable>(as type: T.Type) throws -> T { try nested(bytes, as: T.self) }

    func missing(_ field: Field, _ description: String) -> any Error { giveUp() }

    func corrupted(_ field: Field, _ description: String) -> any Error { giveUp() }

    private func nested<T: AppleJSONDecodable>(_ object: UnsafeBufferPointer<UInt8>, as type: T.Type) throws -> T {
        guard let fields = DirectAppleObject<T.Field>(object, attempt: attempt) else { throw giveUp() }
        return try T(fields: fields)
    }

    private func elements<T: AppleJSONDecodable>(_ array: UnsafeBufferPointer<UInt8>, of type: T.Type) throws -> [T] {
        var elements: [T] = []
        var failure: (any Error)?
        let complete = DirectJSON.elements(of: array) { element in
            guard case .object(let object) = element else { return false }
            do {
                elements.append(try nested(object, as: T.self))
                return true
            } catch {
                failure = error
                return false
            }
        }
        guard complete, failure == nil else { throw giveUp() }
        return elements
    }
}

/// One reading of an answer by the direct reader, shared by all its objects: whether it gave up.
private final class DirectReadAttempt {
    var gaveUp = false
}

/// A coding key made from any string, for reading JSON whose keys are only known at run time.
struct AppleCodingKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Writing as verifyReceipt writes: every value a string, left out when nil, and each date three
/// times (`name`, `name_ms`, `name_pst`).
extension KeyedEncodingContainer<AppleCodingKey> {
    mutating func put(_ value: String?, _ name: String) throws {
        if let value { try encode(value, forKey: AppleCodingKey(name)) }
    }

    mutating func putDate(_ date: Date?, _ name: String) throws {
        guard let date else { return }
        try put(AppleDateFormat.gmt(date), name)
        try put(AppleDateFormat.milliseconds(date), name + "_ms")
        try put(AppleDateFormat.pacific(date), name + "_pst")
    }
}
