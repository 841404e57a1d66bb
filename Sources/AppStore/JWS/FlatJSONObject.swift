/// A JSON object whose members are all scalars, read in one pass: the shape of every StoreKit 2
/// transaction Apple signs.
///
/// `JSONDecoder` costs more than the signature check of the JWS that carries the payload, so the
/// verifier reads the common case here. The reader only answers when its answer is certainly the
/// one `JSONDecoder` would give: it gives up (returns false) on escapes, non-ASCII text, nested
/// values, fractions, exponents, long numbers, repeated keys and anything that is not JSON, and
/// the caller then decodes with `JSONDecoder`, which has the last word on odd input.
enum FlatJSONObject {
    enum Value {
        case string(String)
        /// At most 18 digits, so it fits every integer type the models use.
        case integer(Int64)
        case bool(Bool)
        case null
    }

    /// Calls `member` for each key (its bytes: printable ASCII without escapes, valid while the
    /// call lasts) and value in order; false when the reader gave up or `member` refused a value.
    static func read(_ json: UnsafeBufferPointer<UInt8>, member: (UnsafeBufferPointer<UInt8>, Value) -> Bool) -> Bool {
        var reader = Reader(bytes: json)
        reader.skipWhitespace()
        guard reader.take(UInt8(ascii: "{")) else { return false }
        reader.skipWhitespace()
        if reader.take(UInt8(ascii: "}")) { return reader.isAtEndAfterWhitespace }
        while true {
            reader.skipWhitespace()
            guard let key = reader.text() else { return false }
            reader.skipWhitespace()
            guard reader.take(UInt8(ascii: ":")) else { return false }
            reader.skipWhitespace()
            guard let value = reader.scalar(), member(key, value) else { return false }
            reader.skipWhitespace()
            if reader.take(UInt8(ascii: ",")) { continue }
            guard reader.take(UInt8(ascii: "}")) else { return false }
            return reader.isAtEndAfterWhitespace
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        var isAtEndAfterWhitespace: Bool {
            mutating get {
                skipWhitespace()
                return index == bytes.count
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

        /// Printable ASCII without escapes, else nil.
        mutating func string() -> String? {
            text().map { String(decoding: $0, as: UTF8.self) }
        }

        mutating func scalar() -> Value? {
            guard let first = current else { return nil }
            switch first {
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
            default: return nil
            }
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
            case UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x0A, 0x0D, 0x09: break
            default: return nil
            }
            return .integer(negative ? -value : value)
        }
    }
}
