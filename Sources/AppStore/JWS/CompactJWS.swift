import Foundation

/// A compact JWS split into its parts, before any verification.
struct CompactJWS {
    /// The JOSE header fields the App Store uses.
    struct Header: Decodable {
        var alg: String?
        var x5c: [String]?
        var kid: String?
        var typ: String?
    }

    var header: Header
    /// The first segment as sent: the verified-header cache's key.
    var headerSegment: [UInt8]
    var payload: [UInt8]
    var signature: Data
    /// `base64url(header) "." base64url(payload)`: the bytes the signature covers.
    var signingInput: Data

    init(_ token: String) throws(JWSVerificationFailure) {
        // Read in place as contiguous UTF-8: a token is parsed for every upload and every Server
        // API answer, and splitting the string's views costs more than the signature check.
        var token = token
        let parsed = token.withUTF8 { bytes in
            Result { () throws(JWSVerificationFailure) in try CompactJWS(utf8: bytes) }
        }
        self = try parsed.get()
    }

    private init(utf8 bytes: UnsafeBufferPointer<UInt8>) throws(JWSVerificationFailure) {
        var dots = 0
        var firstDot = 0
        var secondDot = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: ".") {
            dots += 1
            if dots == 1 { firstDot = index } else if dots == 2 { secondDot = index }
        }
        guard dots == 2 else {
            throw .malformed("expected 3 dot-separated segments, found \(dots + 1)")
        }
        let header = UnsafeBufferPointer(rebasing: bytes[..<firstDot])
        let payload = UnsafeBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot])
        let signature = UnsafeBufferPointer(rebasing: bytes[(secondDot + 1)...])
        // An empty signature is left for the algorithm check to refuse: `alg: none` tokens end in
        // "." and deserve that reason rather than "malformed".
        guard !header.isEmpty, !payload.isEmpty else {
            throw .malformed("header or payload segment is empty")
        }
        guard let headerBytes = Base64URL.decode(header) else { throw .malformed("header is not base64url") }
        guard let payloadBytes = Base64URL.decode(payload) else { throw .malformed("payload is not base64url") }
        guard let signatureBytes = Base64URL.decode(signature) else {
            throw .malformed("signature is not base64url")
        }
        do {
            self.header = try JSONDecoder().decode(Header.self, from: headerBytes)
        } catch {
            throw .malformed("header is not a JSON object of the expected shape")
        }
        self.headerSegment = Array(header)
        self.payload = Array(payloadBytes)
        self.signature = signatureBytes
        self.signingInput = Data(UnsafeBufferPointer(rebasing: bytes[..<secondDot]))
    }
}

/// base64url without padding (RFC 7515 §2); padding is tolerated.
enum Base64URL {
    static func decode(_ bytes: some Collection<UInt8>) -> Data? {
        if let decoded = bytes.withContiguousStorageIfAvailable({ decode($0) }) { return decoded }
        return Array(bytes).withUnsafeBufferPointer { decode($0) }
    }

    /// The bytes of canonical unpadded base64url, decoded by table in one pass; nil for anything
    /// else (padding, a bad length or character, stray bits in the last character), which the
    /// full path then judges with ``decode(_:)``. Every JWS Apple signs is canonical.
    static func decodeCanonical(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let remainder = text.count % 4
        guard remainder != 1 else { return nil }
        let count = text.count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var valid = true
        let decoded = sextets.withUnsafeBufferPointer { sextets in
            [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
                output.initialize(repeating: 0)
                initialized = count
                var input = 0
                var written = 0
                while input + 4 <= text.count {
                    let a = sextets[Int(text[input])], b = sextets[Int(text[input + 1])]
                    let c = sextets[Int(text[input + 2])], d = sextets[Int(text[input + 3])]
                    guard (a | b | c | d) & 0x40 == 0 else {
                        valid = false
                        return
                    }
                    output[written] = a << 2 | b >> 4
                    output[written + 1] = b << 4 | c >> 2
                    output[written + 2] = c << 6 | d
                    input += 4
                    written += 3
                }
                guard remainder >= 2 else { return }
                let a = sextets[Int(text[input])], b = sextets[Int(text[input + 1])]
                let c = remainder == 3 ? sextets[Int(text[input + 2])] : 0
                // Bits past the last whole byte are zero in a canonical encoding.
                let stray = remainder == 3 ? c & 0x03 : b & 0x0F
                guard (a | b | c) & 0x40 == 0, stray == 0 else {
                    valid = false
                    return
                }
                output[written] = a << 2 | b >> 4
                if remainder == 3 { output[written + 1] = b << 4 | c >> 2 }
            }
        }
        return valid ? decoded : nil
    }

    /// The value of each base64url character, 0x40 for every other byte.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 0x40, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        let padded = (bytes.count + 3) / 4 * 4
        var refused = false
        let standard = [UInt8](unsafeUninitializedCapacity: padded) { buffer, initialized in
            for (index, byte) in bytes.enumerated() {
                switch byte {
                case UInt8(ascii: "-"): buffer[index] = UInt8(ascii: "+")
                case UInt8(ascii: "_"): buffer[index] = UInt8(ascii: "/")
                case UInt8(ascii: "+"), UInt8(ascii: "/"):
                    refused = true
                    buffer[index] = byte
                default: buffer[index] = byte
                }
            }
            for index in bytes.count..<padded { buffer[index] = UInt8(ascii: "=") }
            initialized = padded
        }
        return refused ? nil : Data(base64Encoded: Data(standard))
    }

    static func encode(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// JSON as the App Store writes it: dates are epoch milliseconds.
public enum AppStoreJSON {
    /// A decoder for App Store payloads.
    ///
    /// Dates are epoch milliseconds; Xcode writes fractional ones (`1697679936049.7297`), which
    /// are truncated to whole milliseconds as Apple's Java library does.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let milliseconds = try container.decode(Double.self)
            // ±10^15 ms is ±31,000 years: enough for Xcode's year 0001, and Int64-safe.
            guard milliseconds.isFinite, abs(milliseconds) < 1e15 else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "date out of range")
            }
            return Date(millisecondsSince1970: Int64(milliseconds.rounded(.towardZero)))
        }
        return decoder
    }

    /// An encoder that writes dates as whole epoch milliseconds, as Apple does.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.millisecondsSince1970)
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

extension Date {
    /// A date from epoch milliseconds, the App Store's time format.
    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Epoch milliseconds, rounded to the nearest millisecond.
    public var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded())
    }
}

/// Reading a JWS payload without verifying it, for display only (`reconcile inspect`).
public enum UnverifiedJWS {
    /// Decodes the payload of `token` as `T` without checking anything. Never trust the result.
    public static func decodePayload<T: Decodable>(_ token: String, as type: T.Type = T.self) throws -> T {
        let jws = try CompactJWS(token)
        return try AppStoreJSON.decoder().decode(T.self, from: Data(jws.payload))
    }
}
