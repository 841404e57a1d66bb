import Crypto
import Foundation
import _CryptoExtras

/// An app's Google Play licence key pair (Play Console → Monetization setup): the simulator signs
/// `purchaseData` with the private half; the job holds the public half, base64 X.509
/// SubjectPublicKeyInfo, RSA-2048, as Play Console shows it (`GOOGLE_PLAY_LICENSE_KEYS`).
public struct PlayLicenseKey: Sendable, CustomStringConvertible {
    /// The app it belongs to.
    public let packageName: String
    // DER bytes, because swift-crypto's keys are not `Sendable` on Linux.
    private let privateKeyDER: Data
    /// The public key as Play Console shows it: base64 of its DER SubjectPublicKeyInfo.
    public let publicKeyBase64: String

    init(packageName: String, privateKey: _RSA.Signing.PrivateKey) {
        self.packageName = packageName
        privateKeyDER = privateKey.derRepresentation
        publicKeyBase64 = privateKey.publicKey.derRepresentation.base64EncodedString()
    }

    /// A fresh RSA-2048 key.
    static func generate(packageName: String) throws -> PlayLicenseKey {
        PlayLicenseKey(packageName: packageName, privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    /// The file a package's key is kept in, inside the state directory (PKCS#8 PEM, mode `0600`).
    static func fileName(packageName: String) -> String {
        // Package names are letters, digits, `_` and `.`; anything else is replaced, to stay a file name.
        let safe = packageName.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" ? $0 : "-" }
        return "play-license-\(String(safe)).pem"
    }

    /// Loads the package's key from `directory`, or creates and writes one there.
    static func loadOrCreate(packageName: String, stateDirectory directory: URL) throws -> PlayLicenseKey {
        let url = directory.appendingPathComponent(fileName(packageName: packageName))
        if let pem = try? String(contentsOf: url, encoding: .utf8) {
            return PlayLicenseKey(
                packageName: packageName, privateKey: try _RSA.Signing.PrivateKey(pemRepresentation: pem))
        }
        let key = try generate(packageName: packageName)
        try writeSecret(Data(key.privateKey.pkcs8PEMRepresentation.utf8), to: url)
        return key
    }

    /// `Purchase.getSignature()`: base64 RSA PKCS#1 v1.5 over SHA-1 of the exact bytes.
    public func signature(for purchaseData: String) throws -> String {
        let digest = Insecure.SHA1.hash(data: Data(purchaseData.utf8))
        return try privateKey.signature(for: digest, padding: .insecurePKCS1v1_5).rawRepresentation
            .base64EncodedString()
    }

    private var privateKey: _RSA.Signing.PrivateKey {
        // The bytes came from a valid key of this type.
        try! _RSA.Signing.PrivateKey(derRepresentation: privateKeyDER)
    }

    /// The package and the public key; never the private key.
    public var description: String { "PlayLicenseKey(\(packageName), public: \(publicKeyBase64.prefix(16))…)" }
}

/// A Google Cloud service account's JSON key, as the Cloud console downloads it, whose assertions the
/// simulator's OAuth token endpoint accepts (`GOOGLE_PLAY_SERVICE_ACCOUNT_FILE`).
public struct PlayServiceAccount: Sendable, CustomStringConvertible {
    /// The key file written into the state directory (mode `0600`).
    public static let fileName = "play-service-account.json"
    /// The account's address, the assertion's `iss`.
    public static let defaultClientEmail = "iap-reconcile@appstore-sim.iam.gserviceaccount.com"

    /// `client_email`.
    public let clientEmail: String
    /// `private_key_id`, the key id an assertion's header may name (`kid`).
    public let privateKeyID: String
    private let privateKeyDER: Data

    init(clientEmail: String, privateKeyID: String, privateKey: _RSA.Signing.PrivateKey) {
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
        privateKeyDER = privateKey.derRepresentation
    }

    /// A fresh account with an RSA-2048 key.
    static func generate() throws -> PlayServiceAccount {
        let id = (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        return PlayServiceAccount(
            clientEmail: defaultClientEmail, privateKeyID: id,
            privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    /// The fields of Google's key file.
    struct KeyFile: Codable {
        var type: String
        var projectID: String?
        var privateKeyID: String
        var privateKey: String
        var clientEmail: String
        var clientID: String?
        var authURI: String?
        var tokenURI: String
        var universeDomain: String?

        enum CodingKeys: String, CodingKey {
            case type
            case projectID = "project_id"
            case privateKeyID = "private_key_id"
            case privateKey = "private_key"
            case clientEmail = "client_email"
            case clientID = "client_id"
            case authURI = "auth_uri"
            case tokenURI = "token_uri"
            case universeDomain = "universe_domain"
        }
    }

    /// Reads a key file's account (its `token_uri` is rewritten on every start).
    static func read(_ data: Data) throws -> PlayServiceAccount {
        let file = try JSONDecoder().decode(KeyFile.self, from: data)
        return PlayServiceAccount(
            clientEmail: file.clientEmail, privateKeyID: file.privateKeyID,
            privateKey: try _RSA.Signing.PrivateKey(pemRepresentation: file.privateKey))
    }

    /// Loads the key file from `directory`, or creates one (written once the token URI is known).
    static func loadOrCreate(stateDirectory directory: URL) throws -> PlayServiceAccount {
        let url = directory.appendingPathComponent(fileName)
        if let data = try? Data(contentsOf: url) { return try read(data) }
        return try generate()
    }

    /// The key file's JSON, its `token_uri` the simulator's own token endpoint.
    public func keyFileJSON(tokenURI: String) -> Data {
        let file = KeyFile(
            type: "service_account", projectID: "appstore-sim", privateKeyID: privateKeyID,
            privateKey: privateKey.pkcs8PEMRepresentation, clientEmail: clientEmail, clientID: "100000000000000000001",
            authURI: "https://accounts.google.com/o/oauth2/auth", tokenURI: tokenURI, universeDomain: "googleapis.com")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(file)) ?? Data()
    }

    /// Writes the key file into `directory` (mode `0600`).
    func write(tokenURI: String, stateDirectory directory: URL) throws {
        try writeSecret(keyFileJSON(tokenURI: tokenURI), to: directory.appendingPathComponent(Self.fileName))
    }

    /// The public half, which checks the assertions' RS256 signatures.
    var publicKey: _RSA.Signing.PublicKey { privateKey.publicKey }

    /// An RS256 JWT signed with this account's key (tests and the demo stand in for Google's libraries).
    public func signJWT(header: [String: any Sendable], claims: [String: any Sendable]) throws -> String {
        try Self.signJWT(header: header, claims: claims, key: privateKey)
    }

    /// An RS256 JWT with `key`; also for tests that sign with a key the simulator does not know.
    static func signJWT(header: [String: any Sendable], claims: [String: any Sendable], key: _RSA.Signing.PrivateKey)
        throws -> String
    {
        let headerData = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let claimsData = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = JWSBase64URL.encode(headerData) + "." + JWSBase64URL.encode(claimsData)
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + JWSBase64URL.encode(signature.rawRepresentation)
    }

    private var privateKey: _RSA.Signing.PrivateKey {
        // The bytes came from a valid key of this type.
        try! _RSA.Signing.PrivateKey(derRepresentation: privateKeyDER)
    }

    /// The account and key id; never the key.
    public var description: String { "PlayServiceAccount(\(clientEmail), key id: \(privateKeyID))" }
}

/// Writes a secret file readable by its owner only.
private func writeSecret(_ data: Data, to url: URL) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try data.write(to: url, options: .atomic)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
}
