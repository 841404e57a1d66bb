/// A strict JSON reader for what an Android client uploads: the upload's payload and the signed
/// `purchaseData` inside it.
///
/// `JSONSerialization` would do, but not the one thing a signed document needs: JSON leaves a
/// name given twice to the reader, and readers disagree (the first, the last), so
/// `{"packageName": A, "packageName": B}` could be verified as one purchase and read as another.
/// This reader refuses a repeated name at any depth, comparing names as the most lenient readers
/// match them (escapes read, case ignored, as `RepeatedMemberCheck` in the receiver does), and
/// keeps numbers as their text so that a 64-bit time is never rounded through a `Double`.
///
/// It reads the bytes in place and keeps an object's members in order, looked up one by one:
/// an upload has a dozen members, and hashing their names into a dictionary and a set was a
/// fifth of reading it (docs/benchmarks.md, Google Play's signature line).
enum PlayJSON {
    enum Value: Sendable, Equatable {
        case string(String)
        /// The number as written, checked against JSON's grammar.
        case number(String)
        case bool(Bool)
        case null
        case object(Object)
        case array([Value])

        var string: String? {
            if case .string(let text) = self { text } else { nil }
        }

        /// An integer, from a JSON number or (as Google sends its int64 fields) a string of digits.
        var int64: Int64? {
            switch self {
            case .number(let text), .string(let text): Int64(text)
            default: nil
            }
        }

        var bool: Bool? {
            if case .bool(let value) = self { value } else { nil }
        }
    }

    /// An object's members in the order written; no two names fold to the same text.
    struct Object: Sendable, Equatable {
        struct Member: Sendable, Equatable {
            let name: String
            let value: Value
        }

        fileprivate(set) var members: [Member] = []

        /// The value of the member named exactly `name`.
        subscript(name: String) -> Value? {
            // Lengths first: most names differ in length, and comparing two strings that differ
            // goes through the standard library's general comparison.
            let count = name.utf8.count
            for member in members where member.name.utf8.count == count && member.name == name { return member.value }
            return nil
        }
    }

    /// Why a text was refused.
    enum Failure: Error, Equatable {
        case malformed
        case repeated(String)
        case tooDeep
        case nul
    }

    /// Purchases are two levels deep; this is far past it and far short of a stack overflow.
    static let maximumDepth = 32

    /// Up to this many members an object's names are compared one by one for a repeat; past it
    /// (no purchase has so many) through a set, so that a hostile object costs no square.
    static let namesComparedInTurn = 16

    /// The value of a whole JSON text (whitespace around it allowed).
    static func parse(_ bytes: some Collection<UInt8>) throws(Failure) -> Value {
        let parsed = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(Failure) in try parse(buffer: buffer) }
        }
        if let parsed { return try parsed.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer in
            Result { () throws(Failure) in try parse(buffer: buffer) }
        }.get()
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> Value {
        var reader = Reader(bytes: buffer)
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == reader.bytes.count else { throw .malformed }
        return value
    }

    /// A member's name as the most lenient readers match it: `uppercased().lowercased()`, which
    /// for a name of ASCII letters (every name Google writes) is its ASCII lowercase, taken
    /// without Unicode's case tables (docs/benchmarks.md, Google Play's signature line).
    static func folded(_ name: String) -> String {
        var contiguous = name
        return contiguous.withUTF8 { utf8 in
            guard utf8.allSatisfy({ $0 < 0x80 }) else { return name.uppercased().lowercased() }
            guard utf8.contains(where: { (0x41...0x5A).contains($0) }) else { return name }
            // Written in place: a name of up to 15 bytes stays a small string, without an allocation.
            return String(unsafeUninitializedCapacity: utf8.count) { buffer in
                for offset in utf8.indices {
                    let byte = utf8[offset]
                    buffer[offset] = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
                }
                return utf8.count
            }
        }
    }

    /// Reads a buffer that outlives it; every access is checked against `bytes.count` first.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Whether the string being read has a byte past ASCII (then its UTF-8 is checked).
        var beyondASCII = false

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func value(depth: Int) throws(Failure) -> Value {
            skipWhitespace()
            guard index < bytes.count else { throw .malformed }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): if literal("true") { return .bool(true) }
            case UInt8(ascii: "f"): if literal("false") { return .bool(false) }
            case UInt8(ascii: "n"): if literal("null") { return .null }
            default: return .number(try number())
            }
            throw .malformed
        }

        mutating func object(depth: Int) throws(Failure) -> Value {
            guard depth <= PlayJSON.maximumDepth else { throw .tooDeep }
            index += 1
            var object = Object()
            object.members.reserveCapacity(PlayJSON.namesComparedInTurn)
            var foldedInTurn: [String] = []
            foldedInTurn.reserveCapacity(PlayJSON.namesComparedInTurn)
            var foldedSet: Set<String>?
            if take(UInt8(ascii: "}")) { return .object(object) }
            repeat {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw .malformed }
                let name = try string()
                // Go's encoding/json matches a field in any case (the Kelvin sign and long s too).
                let folded = PlayJSON.folded(name)
                if foldedSet == nil {
                    guard !foldedInTurn.contains(folded) else { throw .repeated(name) }
                    foldedInTurn.append(folded)
                    if foldedInTurn.count == PlayJSON.namesComparedInTurn { foldedSet = Set(foldedInTurn) }
                } else {
                    guard foldedSet!.insert(folded).inserted else { throw .repeated(name) }
                }
                guard take(UInt8(ascii: ":")) else { throw .malformed }
                object.members.append(Object.Member(name: name, value: try value(depth: depth)))
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { throw .malformed }
            return .object(object)
        }

        mutating func array(depth: Int) throws(Failure) -> Value {
            guard depth <= PlayJSON.maximumDepth else { throw .tooDeep }
            index += 1
            var elements: [Value] = []
            if take(UInt8(ascii: "]")) { return .array(elements) }
            repeat {
                elements.append(try value(depth: depth))
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "]")) else { throw .malformed }
            return .array(elements)
        }

        /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as written.
        mutating func number() throws(Failure) -> String {
            let start = index
            func digits() -> Int {
                let first = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - first
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integerStart = index
            let integerDigits = digits()
            guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
                throw .malformed
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw .malformed }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { throw .malformed }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }

        /// The string at `index` (its opening quote), escapes read; NUL, raw or escaped, is refused
        /// (PostgreSQL's text cannot hold it). A lone surrogate is refused too: its UTF-8 does not exist.
        mutating func string() throws(Failure) -> String {
            index += 1
            let start = index
            beyondASCII = false
            // The common case, no escapes: the bytes are the text.
            plainRun()
            guard index < bytes.count else { throw .malformed }
            if bytes[index] == UInt8(ascii: "\"") {
                defer { index += 1 }
                return try validated(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            }
            // Escapes: the text is built, a plain run at a time (never longer than the input).
            var text: [UInt8] = []
            text.reserveCapacity(bytes.count - start)
            var run = start
            while true {
                text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                guard index < bytes.count else { throw .malformed }
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return try text.withUnsafeBufferPointer { buffer throws(Failure) in try validated(buffer) }
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw .malformed }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                    case UInt8(ascii: "b"): text.append(0x08)
                    case UInt8(ascii: "f"): text.append(0x0C)
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800...0xDBFF).contains(scalar) {
                            guard literal("\\u") else { throw .malformed }
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw .malformed }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard scalar != 0 else { throw .nul }
                        guard let unicode = Unicode.Scalar(scalar) else { throw .malformed }
                        if scalar >= 0x80 { beyondASCII = true }
                        UTF8.encode(unicode) { text.append($0) }
                    default: throw .malformed
                    }
                case 0: throw .nul
                default: throw .malformed  // a control character
                }
                run = index
                plainRun()
            }
        }

        /// Moves past bytes that stand for themselves in a string: up to a quote, a backslash,
        /// a control character or the end. (Sixteen at a time with `SIMD16<UInt8>` masks made the
        /// bench's Play signature line twice as slow here, so the bytes are read one by one.)
        mutating func plainRun() {
            while index < bytes.count {
                let byte = bytes[index]
                guard byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 else { return }
                if byte >= 0x80 { beyondASCII = true }
                index += 1
            }
        }

        /// The text of valid UTF-8. ASCII, nearly every text here, is taken as it is: the
        /// generic `String(validating:as:)` looked up type metadata on every call.
        func validated(_ text: UnsafeBufferPointer<UInt8>) throws(Failure) -> String {
            guard beyondASCII else { return String(decoding: text, as: UTF8.self) }
            guard let string = String(validating: text, as: UTF8.self) else { throw .malformed }
            return string
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            guard index + 4 <= bytes.count else { throw .malformed }
            var value: UInt32 = 0
            for byte in UnsafeBufferPointer(rebasing: bytes[index..<index + 4]) {
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw .malformed
                }
                value = value << 4 | digit
            }
            index += 4
            return value
        }
    }
}
