import Crypto
import Foundation
import SwiftASN1
import X509

@testable import AppStore

/// A throw-away App Store-like CA for forged-input tests: root → intermediate (Apple WWDR OID)
/// → leaf (Apple receipt-signing OID), all P-256, and a JWS signer over it.
struct TestCertificateAuthority {
    static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
    static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]

    var root: Certificate
    var intermediate: Certificate
    var leaf: Certificate
    var leafKey: P256.Signing.PrivateKey

    var roots: TrustedRoots { TrustedRoots([root]) }

    struct Options {
        var leafHasAppleOID = true
        var intermediateHasAppleOID = true
        var notValidBefore = Date(timeIntervalSince1970: 1_600_000_000)  // 2020-09
        var notValidAfter = Date(timeIntervalSince1970: 1_900_000_000)  // 2030-03
        var leafNotValidAfter: Date? = nil
        var leafSignedByRoot = false
    }

    init(_ options: Options = Options()) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        leafKey = P256.Signing.PrivateKey()
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

    static func base64(_ certificate: Certificate) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes).base64EncodedString()
    }

    /// A JWS with this CA's chain in `x5c`, signed ES256 by the leaf.
    func sign(_ payload: some Encodable, header: [String: Any]? = nil) throws -> String {
        let payloadJSON = try AppStoreJSON.encoder().encode(payload)
        let headerObject = try header ?? ["alg": "ES256", "x5c": x5c]
        let headerJSON = try JSONSerialization.data(withJSONObject: headerObject, options: [.sortedKeys])
        let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(payloadJSON)
        let signature = try leafKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    var x5c: [String] {
        get throws { [try Self.base64(leaf), try Self.base64(intermediate), try Self.base64(root)] }
    }
}

extension JWSTransaction {
    /// A plausible sandbox consumable purchase for forged-input tests.
    static func sample(
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
