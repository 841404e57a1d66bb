import Foundation

/// JSON read in one pass over its bytes, in the shapes Apple sends: a StoreKit 2 transaction (a
/// flat object of scalars) and a verifyReceipt answer (objects, and arrays of objects, of scalars).
///
/// `JSONDecoder` costs more than the signature check of the JWS that carries a payload, and more
/// than the rest of the job's work on a verifyReceipt answer, so the common case is read here. The
/// reader only answers when its answer is certainly the one `JSONDecoder` would give: it gives up
/// (returns false) on escapes, non-ASCII text, fractions, exponents, long numbers, deep nesting and
/// anything that is not JSON, and the caller then decodes with `JSONDecoder`, which has the last
/// word on odd input. A key given twice is the caller's to refuse.
enum DirectJSON {
    enum Value {
        /// The bytes of a string: printable ASCII without escapes, valid while the call lasts.
        case string(UnsafeBufferPointer<UInt8>)
        /// At most 18 digits, so it fits every integer type the models use.
        case integer(Int64)
        case bool(Bool)
        case null
        /// The bytes of a nested object (read them with ``members(of:nested:_:)``), checked by the
        /// same rules; valid while the call lasts.
        case object(UnsafeBufferPointer<UInt8>)
        /// The bytes of a nested array (read them with ``elements(of:_:)``), checked likewise.
        case array(UnsafeBufferPointer<UInt8>)

        /// The text of a `.string`.
        var string: String? {
            guard case .string(let bytes) = self else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Deeper than this the reader gives up: `JSONDecoder` has a depth limit of its own, and
    /// Apple's answers are three levels deep.
    static let maximumDepth = 8

    /// Calls `member` for each key (its bytes: printable ASCII without escapes, valid while the
    /// call lasts) and value of the object `json`, in order; false when the reader gave up or
    /// `member` refused a value. Without `nested` an object or array value gives up: a flat object.
    static func members(
        of json: UnsafeBufferPointer<UInt8>, nested: Bool = false,
        _ member: (UnsafeBufferPointer<UInt8>, Value) -> Bool
    ) -> Bool {
        var reader = Reader(bytes: json, nested: nested)
        return reader.whole { reader in reader.object(depth: 0, member) }
    }

    /// Calls `element` for each value of the array `json`, in order; false when the reader gave
    /// up or `element` refused a value.
    static func elements(of json: UnsafeBufferPointer<UInt8>, _ element: (Value) -> Bool) -> Bool {
        var reader = Reader(bytes: json, nested: true)
        return reader.whole { reader in reader.array(depth: 0, element) }
    }

    /// Names matched by their bytes, so that a member's key is found without making a String of it.
    struct Keys<Name: Sendable>: Sendable {
        private let entries: [(bytes: [UInt8], name: Name)]

        init(_ names: [(String, Name)]) {
            entries = names.map { (Array($0.0.utf8), $0.1) }
        }

        func callAsFunction(_ key: UnsafeBufferPointer<UInt8>) -> Name? {
            guard let base = key.baseAddress else { return nil }
            for entry in entries where entry.bytes.count == key.count {
                if entry.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, base, key.count) }) == 0 { return entry.name }
            }
            return nil
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let nested: Bool
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>, nested: Bool) {
            self.bytes = bytes
            self.nested = nested
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        /// `read` over the whole text, whitespace around it allowed.
        mutating func whole(_ read: (inout Reader) -> Bool) -> Bool {
            skipWhitespace()
            guard read(&self) else { return false }
            skipWhitespace()
            return index == bytes.count
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        /// `{ "key": value, … }` from the current byte.
        mutating func object(depth: Int, _ member: (UnsafeBufferPointer<UInt8>, Value) -> Bool) -> Bool {
            guard take(UInt8(ascii: "{")) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: "}")) { return true }
            while true {
                skipWhitespace()
                guard let key = text() else { return false }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return false }
                skipWhitespace()
                guard let value = value(depth: depth), member(key, value) else { return false }
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                return take(UInt8(ascii: "}"))
            }
        }

        /// `[ value, … ]` from the current byte.
        mutating func array(depth: Int, _ element: (Value) -> Bool) -> Bool {
            guard take(UInt8(ascii: "[")) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: "]")) { return true }
            while true {
                skipWhitespace()
                guard let value = value(depth: depth), element(value) else { return false }
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                return take(UInt8(ascii: "]"))
            }
        }

        /// A scalar, or (when nested values are read) an object or array checked to its end.
        mutating func value(depth: Int) -> Value? {
            guard let first = current else { return nil }
            switch first {
            case UInt8(ascii: "\""): return text().map(Value.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard nested, depth < DirectJSON.maximumDepth else { return nil }
                let start = index
                let complete = first == UInt8(ascii: "{")
                    ? object(depth: depth + 1) { _, _ in true } : array(depth: depth + 1) { _ in true }
                guard complete else { return nil }
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                return first == UInt8(ascii: "{") ? .object(slice) : .array(slice)
            default: return nil
            }
        }

        /// The bytes of a string of printable ASCII without escapes, else nil.
        mutating func text() -> UnsafeBufferPointer<UInt8>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while let byte = current {
                if byte == UInt8(ascii: "\"") {
                    let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    index += 1
                    return text
                }
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }

        mutating func literal(_ word: StaticString, _ value: Value) -> Value? {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return nil }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return nil }
            index += count
            return value
        }

        /// `-?(0|[1-9][0-9]{0,17})` followed by something that ends a number.
        mutating func integer() -> Value? {
            let negative = take(UInt8(ascii: "-"))
            let start = index
            var value: Int64 = 0
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                guard index - start < 18 else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                index += 1
            }
            let digits = index - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            switch current {
            case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: break
            default: return nil
            }
            return .integer(negative ? -value : value)
        }
    }
}
