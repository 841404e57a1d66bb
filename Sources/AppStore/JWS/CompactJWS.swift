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
    var payload: Data
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
        self.payload = payloadBytes
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
        return try AppStoreJSON.decoder().decode(T.self, from: jws.payload)
    }
}
