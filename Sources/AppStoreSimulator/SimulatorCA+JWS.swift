import AppStore
import Crypto
import Foundation
import SwiftASN1
import X509

extension SimulatorCA {
    /// The `x5c` header Apple sends: leaf, intermediate, root, each standard base64 DER.
    public var x5c: [String] {
        [leaf, intermediate, root].map { certificate in
            var serializer = DER.Serializer()
            // A certificate this type built or parsed always serializes.
            try! serializer.serialize(certificate)
            return Data(serializer.serializedBytes).base64EncodedString()
        }
    }

    /// Signs `payload` as a StoreKit 2 compact JWS: header `{"alg":"ES256","x5c":[…]}`, the
    /// payload in Apple's JSON (epoch-millisecond dates), and the leaf's raw `r||s` signature.
    public func signJWS(_ payload: some Encodable) throws -> String {
        let header = try JSONSerialization.data(
            withJSONObject: ["alg": "ES256", "x5c": x5c] as [String: Any],
            options: [.sortedKeys, .withoutEscapingSlashes])
        let body = try AppStoreJSON.encoder().encode(payload)
        let signingInput = JWSBase64URL.encode(header) + "." + JWSBase64URL.encode(body)
        let signature = try leafKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + JWSBase64URL.encode(signature.rawRepresentation)
    }
}

/// base64url without padding (RFC 7515 §2).
enum JWSBase64URL {
    static func encode(_ data: some DataProtocol) -> String {
        // Byte by byte: Foundation's replacingOccurrences is slow on Linux, and scripts/bench
        // signs a hundred thousand of these.
        var bytes = [UInt8]()
        for byte in Data(data).base64EncodedData() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): bytes.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func decode(_ text: some StringProtocol) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }
}
