/// Finds a member name that an object of a JSON text gives twice, at any depth.
///
/// JSON leaves a repeated name to the reader, and readers disagree: the verifier here took the
/// first `signedPayload` of `{"signedPayload": A, "signedPayload": B}`, while an app endpoint in
/// Python, JavaScript or Go (which the receiver forwards the exact body to) takes the last, so B,
/// never verified, could be a forged refund. Names are compared as the most lenient of those
/// readers matches them: after their escapes are read (`"signed\u0050ayload"` is `signedPayload`)
/// and without regard to case (Go's `encoding/json` fills a struct field from any case of its
/// name, `ſ` and the Kelvin sign included). Apple's body has one member, so none of this refuses it.
enum RepeatedMemberCheck {
    /// Why a body is refused.
    enum Finding: Error, Equatable, CustomStringConvertible {
        /// An object gives this name (as written the second time) twice.
        case repeated(String)
        /// Objects and arrays nested deeper than ``maximumDepth``.
        case tooDeep
        /// Not JSON text.
        case malformed

        var description: String {
            switch self {
            case .repeated(let name):
                "the body gives the member \(String(reflecting: String(name.unicodeScalars.prefix(64)))) twice"
            case .tooDeep: "the body nests objects or arrays more than \(RepeatedMemberCheck.maximumDepth) deep"
            case .malformed: "the body is not JSON"
            }
        }
    }

    /// Apple's body is one level deep; this is far past it and far short of a stack overflow.
    static let maximumDepth = 64

    /// Nil when every object's names are distinct; otherwise what is wrong.
    static func check(_ json: some Collection<UInt8>) -> Finding? {
        var scanner = Scanner(bytes: Array(json))
        do {
            try scanner.value(depth: 0)
            scanner.skipWhitespace()
            return scanner.index == scanner.bytes.count ? nil : .malformed
        } catch {
            return error
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A
                || bytes[index] == 0x0D
            {
                index += 1
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func value(depth: Int) throws(Finding) {
            skipWhitespace()
            guard index < bytes.count else { throw .malformed }
            switch bytes[index] {
            case UInt8(ascii: "{"): try object(depth: depth + 1)
            case UInt8(ascii: "["): try array(depth: depth + 1)
            case UInt8(ascii: "\""): _ = try string(decoding: false)
            default:
                // A number or a literal: which one it is, and whether it is right, is the real
                // parser's to say; here it only has to end where a value ends.
                let start = index
                while index < bytes.count, Self.isScalarByte(bytes[index]) { index += 1 }
                guard index > start else { throw .malformed }
            }
        }

        static func isScalarByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
                true
            default: false
            }
        }

        static func hexValue(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
        }

        mutating func object(depth: Int) throws(Finding) {
            guard depth <= RepeatedMemberCheck.maximumDepth else { throw .tooDeep }
            index += 1
            if take(UInt8(ascii: "}")) { return }
            var names = Set<String>()
            repeat {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw .malformed }
                let name = try string(decoding: true)
                guard names.insert(name.uppercased().lowercased()).inserted else { throw .repeated(name) }
                guard take(UInt8(ascii: ":")) else { throw .malformed }
                try value(depth: depth)
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { throw .malformed }
        }

        mutating func array(depth: Int) throws(Finding) {
            guard depth <= RepeatedMemberCheck.maximumDepth else { throw .tooDeep }
            index += 1
            if take(UInt8(ascii: "]")) { return }
            repeat {
                try value(depth: depth)
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "]")) else { throw .malformed }
        }

        /// The string at `index` (its opening quote), read past its closing quote; its text when
        /// `decoding`, escapes read (a lone surrogate as U+FFFD, as the lenient readers take it).
        mutating func string(decoding: Bool) throws(Finding) -> String {
            index += 1
            var text: [UInt8] = []
            var pendingHigh: UInt32?
            func flushHigh() {
                if pendingHigh != nil { text += [0xEF, 0xBF, 0xBD] }
                pendingHigh = nil
            }
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flushHigh()
                    return decoding ? String(decoding: text, as: UTF8.self) : ""
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw .malformed }
                    let escape = bytes[index]
                    index += 1
                    let simple: UInt8? =
                        switch escape {
                        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): escape
                        case UInt8(ascii: "b"): 0x08
                        case UInt8(ascii: "f"): 0x0C
                        case UInt8(ascii: "n"): 0x0A
                        case UInt8(ascii: "r"): 0x0D
                        case UInt8(ascii: "t"): 0x09
                        default: nil
                        }
                    if let simple {
                        flushHigh()
                        if decoding { text.append(simple) }
                        continue
                    }
                    guard escape == UInt8(ascii: "u"), index + 4 <= bytes.count else { throw .malformed }
                    var unit: UInt32 = 0
                    for digit in bytes[index..<index + 4] {
                        guard let value = Self.hexValue(digit) else { throw .malformed }
                        unit = unit << 4 | value
                    }
                    index += 4
                    guard decoding else { continue }
                    if (0xDC00...0xDFFF).contains(unit), let high = pendingHigh {
                        let scalar = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)
                        text += Array(String(Unicode.Scalar(scalar)!).utf8)
                        pendingHigh = nil
                    } else {
                        flushHigh()
                        if (0xD800...0xDBFF).contains(unit) {
                            pendingHigh = unit
                        } else if let scalar = Unicode.Scalar(unit) {
                            text += Array(String(scalar).utf8)
                        } else {
                            text += [0xEF, 0xBF, 0xBD]
                        }
                    }
                case 0x00..<0x20:
                    throw .malformed
                default:
                    flushHigh()
                    if decoding { text.append(byte) }
                }
            }
            throw .malformed
        }
    }
}
