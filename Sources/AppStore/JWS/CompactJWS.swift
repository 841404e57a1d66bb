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
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .malformed("expected 3 dot-separated segments, found \(parts.count)")
        }
        // An empty signature is left for the algorithm check to refuse: `alg: none` tokens end in
        // "." and deserve that reason rather than "malformed".
        guard !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .malformed("header or payload segment is empty")
        }
        guard let headerBytes = Base64URL.decode(parts[0]) else { throw .malformed("header is not base64url") }
        guard let payload = Base64URL.decode(parts[1]) else { throw .malformed("payload is not base64url") }
        guard let signature = Base64URL.decode(parts[2]) else { throw .malformed("signature is not base64url") }
        do {
            self.header = try JSONDecoder().decode(Header.self, from: headerBytes)
        } catch {
            throw .malformed("header is not a JSON object of the expected shape")
        }
        self.payload = payload
        self.signature = signature
        self.signingInput = Data(parts[0]) + Data([UInt8(ascii: ".")]) + Data(parts[1])
    }
}

/// base64url without padding (RFC 7515 §2); padding is tolerated.
enum Base64URL {
    static func decode(_ bytes: some Collection<UInt8>) -> Data? {
        var standard = [UInt8]()
        standard.reserveCapacity(bytes.count + 3)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            case UInt8(ascii: "+"), UInt8(ascii: "/"): return nil
            default: standard.append(byte)
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(standard))
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
