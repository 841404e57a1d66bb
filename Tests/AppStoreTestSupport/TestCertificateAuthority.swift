import AppStore
import Crypto
import Foundation
import SwiftASN1
import X509

/// A throw-away App Store-like CA for forged-input tests: root → intermediate (Apple WWDR OID)
/// → leaf (Apple receipt-signing OID), all P-256, and a JWS signer over it. Shared by the
/// AppStore tests (one forgery at a time) and the reconciliation tests (forgeries as uploads).
public struct TestCertificateAuthority: Sendable {
    /// Apple's receipt-signing OID, on the leaf.
    public static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
    /// Apple's WWDR OID, on the intermediate.
    public static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]

    /// The self-signed root.
    public var root: Certificate
    /// The intermediate.
    public var intermediate: Certificate
    /// The signing leaf.
    public var leaf: Certificate
    // swift-crypto's keys are not Sendable on Linux; their raw bytes are.
    private var leafKeyBytes: Data

    /// The leaf's key.
    public var leafKey: P256.Signing.PrivateKey {
        // The bytes came from a valid key of this type.
        try! P256.Signing.PrivateKey(rawRepresentation: leafKeyBytes)
    }

    /// This CA's root as the only trusted root.
    public var roots: TrustedRoots { TrustedRoots([root]) }

    /// How to make the CA wrong.
    public struct Options: Sendable {
        /// The leaf carries Apple's receipt-signing OID.
        public var leafHasAppleOID = true
        /// The intermediate carries Apple's WWDR OID.
        public var intermediateHasAppleOID = true
        /// Start of every certificate's validity.
        public var notValidBefore = Date(timeIntervalSince1970: 1_600_000_000)  // 2020-09
        /// End of every certificate's validity.
        public var notValidAfter = Date(timeIntervalSince1970: 1_900_000_000)  // 2030-03
        /// End of the leaf's validity, when it differs.
        public var leafNotValidAfter: Date? = nil
        /// The root issues the leaf directly (no intermediate in the path).
        public var leafSignedByRoot = false

        /// Creates options; the defaults make a well-formed CA.
        public init(
            leafHasAppleOID: Bool = true, intermediateHasAppleOID: Bool = true,
            notValidBefore: Date = Date(timeIntervalSince1970: 1_600_000_000),
            notValidAfter: Date = Date(timeIntervalSince1970: 1_900_000_000), leafNotValidAfter: Date? = nil,
            leafSignedByRoot: Bool = false
        ) {
            self.leafHasAppleOID = leafHasAppleOID
            self.intermediateHasAppleOID = intermediateHasAppleOID
            self.notValidBefore = notValidBefore
            self.notValidAfter = notValidAfter
            self.leafNotValidAfter = leafNotValidAfter
            self.leafSignedByRoot = leafSignedByRoot
        }
    }

    /// Creates a CA with fresh keys.
    public init(_ options: Options = Options()) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        leafKeyBytes = leafKey.rawRepresentation
        let rootName = try DistinguishedName { CommonName("Forged Root CA - G3") }
        let intermediateName = try DistinguishedName { CommonName("Forged WWDR CA - G6") }
        let leafName = try DistinguishedName { CommonName("Forged Receipt Signing") }

        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: options.notValidBefore, notValidAfter: options.notValidAfter,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey)
        )
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: options.notValidBefore, notValidAfter: options.notValidAfter,
            issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if options.intermediateHasAppleOID {
                    Certificate.Extension(oid: Self.intermediateOID, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: .init(rootKey)
        )
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: options.notValidBefore, notValidAfter: options.leafNotValidAfter ?? options.notValidAfter,
            issuer: options.leafSignedByRoot ? rootName : intermediateName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if options.leafHasAppleOID {
                    Certificate.Extension(oid: Self.leafOID, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: options.leafSignedByRoot ? .init(rootKey) : .init(intermediateKey)
        )
    }

    /// A certificate as standard base64 DER, as `x5c` carries it.
    public static func base64(_ certificate: Certificate) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes).base64EncodedString()
    }

    /// A JWS with this CA's chain in `x5c` (or `header`), signed ES256 by the leaf.
    public func sign(_ payload: some Encodable, header: [String: Any]? = nil) throws -> String {
        let payloadJSON = try AppStoreJSON.encoder().encode(payload)
        return try sign(payloadJSON: payloadJSON, header: header)
    }

    /// A JWS over payload bytes exactly as given (which need not be JSON, nor UTF-8).
    public func sign(payloadJSON: Data, header: [String: Any]? = nil) throws -> String {
        let headerObject = try header ?? ["alg": "ES256", "x5c": x5c]
        let headerJSON = try JSONSerialization.data(withJSONObject: headerObject, options: [.sortedKeys])
        return try sign(headerJSON: headerJSON, payloadJSON: payloadJSON)
    }

    /// A JWS over header and payload bytes exactly as given.
    public func sign(headerJSON: Data, payloadJSON: Data) throws -> String {
        try JWSText.sign(headerJSON: headerJSON, payloadJSON: payloadJSON, key: leafKey)
    }

    /// `x5c` for this CA: leaf, intermediate, root.
    public var x5c: [String] {
        get throws { [try Self.base64(leaf), try Self.base64(intermediate), try Self.base64(root)] }
    }
}

/// base64url for building tokens by hand (RFC 7515 §2).
public enum JWSText {
    /// base64url without padding.
    public static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A compact JWS over header and payload bytes exactly as given, signed ES256 with `key`.
    public static func sign(headerJSON: Data, payloadJSON: Data, key: P256.Signing.PrivateKey) throws -> String {
        let signingInput = base64URL(headerJSON) + "." + base64URL(payloadJSON)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + base64URL(signature.rawRepresentation)
    }

    /// The bytes of a base64url segment, padding optional; nil when it is not base64url.
    public static func decodeBase64URL(_ text: some StringProtocol) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }
}

extension JWSTransaction {
    /// A plausible sandbox consumable purchase for forged-input tests.
    public static func sample(
        bundleId: String = "com.example.coins",
        environment: AppStoreEnvironment = .sandbox,
        signedDate: Date = Date(timeIntervalSince1970: 1_790_000_000)
    ) -> JWSTransaction {
        var transaction = JWSTransaction()
        transaction.transactionId = "2000000000000042"
        transaction.originalTransactionId = "2000000000000042"
        transaction.bundleId = bundleId
        transaction.productId = "coins.100"
        transaction.purchaseDate = signedDate.addingTimeInterval(-60)
        transaction.quantity = 1
        transaction.type = .consumable
        transaction.inAppOwnershipType = .purchased
        transaction.signedDate = signedDate
        transaction.environment = environment
        transaction.transactionReason = .purchase
        transaction.price = 990_000
        transaction.currency = "USD"
        return transaction
    }
}
