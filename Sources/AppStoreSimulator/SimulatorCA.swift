import AppStore
import Crypto
import Foundation
import SwiftASN1
@_spi(CMS) import X509

/// The simulator's own certificate authority, laid out like Apple's so that the job's verifiers
/// run their real checks against it: a root, an intermediate carrying Apple's WWDR marker OID
/// `1.2.840.113635.100.6.2.1`, and a signing leaf carrying Apple's receipt-signing OID
/// `1.2.840.113635.100.6.11.1`. The leaf signs PKCS#7 app receipts (CMS) and StoreKit 2
/// JWS (ES256), which is why every key is P-256.
///
/// Persisted as PEM in a state directory so that receipts issued before a restart still verify;
/// the job trusts the root through `APPLE_ROOT_CERTIFICATES=<dir>/root.pem`.
public struct SimulatorCA: Sendable {
    /// Apple's marker for the "Apple Worldwide Developer Relations" intermediate.
    public static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    /// Apple's marker for the receipt / transaction signing leaf.
    public static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]

    /// File names inside the state directory.
    public enum FileName {
        /// The root certificate, PEM: what `APPLE_ROOT_CERTIFICATES` points at.
        public static let rootCertificate = "root.pem"
        /// The root certificate, DER.
        public static let rootCertificateDER = "root.der"
        static let rootKey = "root-key.pem"
        static let intermediateCertificate = "intermediate.pem"
        static let intermediateKey = "intermediate-key.pem"
        static let leafCertificate = "leaf.pem"
        static let leafKey = "leaf-key.pem"
    }

    /// The self-signed root.
    public let root: Certificate
    /// The intermediate, issued by the root.
    public let intermediate: Certificate
    /// The signing leaf, issued by the intermediate.
    public let leaf: Certificate
    // swift-crypto's keys are not `Sendable` on Linux; their raw bytes are, and rebuilding a key
    // from 32 bytes costs next to nothing.
    private let leafKeyBytes: Data
    private let rootKeyBytes: Data
    private let intermediateKeyBytes: Data

    /// The leaf's key: signs receipts and JWS.
    public var leafKey: P256.Signing.PrivateKey { Self.key(leafKeyBytes) }
    private var rootKey: P256.Signing.PrivateKey { Self.key(rootKeyBytes) }
    private var intermediateKey: P256.Signing.PrivateKey { Self.key(intermediateKeyBytes) }

    private static func key(_ bytes: Data) -> P256.Signing.PrivateKey {
        // The bytes came from a valid key of this type.
        try! P256.Signing.PrivateKey(rawRepresentation: bytes)
    }

    private init(
        root: Certificate, intermediate: Certificate, leaf: Certificate, leafKey: P256.Signing.PrivateKey,
        rootKey: P256.Signing.PrivateKey, intermediateKey: P256.Signing.PrivateKey
    ) {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        leafKeyBytes = leafKey.rawRepresentation
        rootKeyBytes = rootKey.rawRepresentation
        intermediateKeyBytes = intermediateKey.rawRepresentation
    }

    /// Creates a fresh CA in memory. Validity runs from 2000 to 2099 so that receipts dated in
    /// the past (the tests backdate purchases) verify at their own creation date.
    public static func generate() throws -> SimulatorCA {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let notBefore = Date(timeIntervalSince1970: 946_684_800)  // 2000-01-01
        let notAfter = Date(timeIntervalSince1970: 4_102_444_799)  // 2099-12-31

        let rootName = try DistinguishedName {
            CountryName("US")
            OrganizationName("appstore-sim")
            OrganizationalUnitName("appstore-sim Certification Authority")
            CommonName("appstore-sim Root CA")
        }
        let intermediateName = try DistinguishedName {
            CountryName("US")
            OrganizationName("appstore-sim")
            OrganizationalUnitName("G6")
            CommonName("appstore-sim Worldwide Developer Relations Certification Authority")
        }
        let leafName = try DistinguishedName {
            CountryName("US")
            OrganizationName("appstore-sim")
            OrganizationalUnitName("appstore-sim Certification Authority")
            CommonName("appstore-sim Mac App Store and iTunes Store Receipt Signing")
        }
        let rootPublic = Certificate.PublicKey(rootKey.publicKey)
        let intermediatePublic = Certificate.PublicKey(intermediateKey.publicKey)
        let leafPublic = Certificate.PublicKey(leafKey.publicKey)
        func issue(
            _ subject: DistinguishedName, _ publicKey: Certificate.PublicKey, by issuer: DistinguishedName,
            signedWith issuerKey: P256.Signing.PrivateKey, extensions: Certificate.Extensions
        ) throws -> Certificate {
            try Certificate(
                version: .v3, serialNumber: .init(), publicKey: publicKey, notValidBefore: notBefore,
                notValidAfter: notAfter, issuer: issuer, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions, issuerPrivateKey: .init(issuerKey))
        }

        let root = try issue(
            rootName, rootPublic, by: rootName, signedWith: rootKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: rootPublic)
            })
        let intermediate = try issue(
            intermediateName, intermediatePublic, by: rootName, signedWith: rootKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: intermediatePublic)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: rootPublic).keyIdentifier)
                // Apple's marker extensions hold an ASN.1 NULL and are not critical.
                Certificate.Extension(oid: intermediateMarkerOID, critical: false, value: [0x05, 0x00])
            })
        let leaf = try issue(
            leafName, leafPublic, by: intermediateName, signedWith: intermediateKey,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(hash: leafPublic)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: intermediatePublic).keyIdentifier)
                Certificate.Extension(oid: leafMarkerOID, critical: false, value: [0x05, 0x00])
            })
        return SimulatorCA(
            root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey, rootKey: rootKey,
            intermediateKey: intermediateKey)
    }

    /// Loads the CA from `directory`, or creates one there (keys `0600`) when it holds none.
    public static func loadOrCreate(stateDirectory directory: URL) throws -> SimulatorCA {
        let files = FileManager.default
        if files.fileExists(atPath: directory.appendingPathComponent(FileName.leafKey).path) {
            return try load(from: directory)
        }
        try files.createDirectory(at: directory, withIntermediateDirectories: true)
        let ca = try generate()
        try ca.write(to: directory)
        return ca
    }

    /// Loads a CA written by ``write(to:)``.
    public static func load(from directory: URL) throws -> SimulatorCA {
        func text(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return SimulatorCA(
            root: try Certificate(pemEncoded: text(FileName.rootCertificate)),
            intermediate: try Certificate(pemEncoded: text(FileName.intermediateCertificate)),
            leaf: try Certificate(pemEncoded: text(FileName.leafCertificate)),
            leafKey: try P256.Signing.PrivateKey(pemRepresentation: text(FileName.leafKey)),
            rootKey: try P256.Signing.PrivateKey(pemRepresentation: text(FileName.rootKey)),
            intermediateKey: try P256.Signing.PrivateKey(pemRepresentation: text(FileName.intermediateKey)))
    }

    /// Writes certificates and keys as PEM (and the root also as DER) into `directory`.
    public func write(to directory: URL) throws {
        let files = FileManager.default
        func put(_ text: String, _ name: String, secret: Bool = false) throws {
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url, options: .atomic)
            if secret { try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path) }
        }
        try put(try root.serializeAsPEM().pemString, FileName.rootCertificate)
        try Data(rootDER).write(to: directory.appendingPathComponent(FileName.rootCertificateDER), options: .atomic)
        try put(try intermediate.serializeAsPEM().pemString, FileName.intermediateCertificate)
        try put(try leaf.serializeAsPEM().pemString, FileName.leafCertificate)
        try put(rootKey.pemRepresentation, FileName.rootKey, secret: true)
        try put(intermediateKey.pemRepresentation, FileName.intermediateKey, secret: true)
        try put(leafKey.pemRepresentation, FileName.leafKey, secret: true)
    }

    /// The root certificate, DER.
    public var rootDER: [UInt8] {
        var serializer = DER.Serializer()
        // A certificate this type built or parsed always serializes.
        try! serializer.serialize(root)
        return serializer.serializedBytes
    }

    /// The root certificate, PEM.
    public var rootPEM: String {
        (try? root.serializeAsPEM().pemString) ?? ""
    }

    /// Signs `payload` (a DER receipt payload) as Apple does: a CMS SignedData with the payload
    /// attached and the leaf and intermediate certificates included.
    public func signReceipt(payload: [UInt8]) throws -> [UInt8] {
        try CMS.sign(
            payload, signatureAlgorithm: .ecdsaWithSHA256, additionalIntermediateCertificates: [intermediate],
            certificate: leaf, privateKey: .init(leafKey), detached: false)
    }

    /// Whether `receipt` (PKCS#7 DER/BER) carries a valid signature by a certificate chaining to
    /// this CA's root at `date` (the receipt's creation date), with Apple's marker extensions on
    /// the chain: the same check, by the same code, that the job applies to Apple's receipts.
    public func isValidReceiptSignature(_ receipt: [UInt8], at date: Date) async -> Bool {
        guard let parsed = try? AppReceipt(berEncoded: receipt) else { return false }
        return await isValidReceiptSignature(parsed, at: date)
    }

    /// The same check on an already parsed receipt.
    public func isValidReceiptSignature(_ receipt: AppReceipt, at date: Date) async -> Bool {
        if case .valid = await receipt.verifySignature(trustRoots: TrustedRoots([root]), at: date) { return true }
        return false
    }
}
