import AppStore
import Crypto
import Foundation

/// The App Store Connect API key the simulator's Server API accepts tokens from. The simulator
/// holds the private half too, so that it can hand the job a `.p8` file (`APPSTORE_PRIVATE_KEY_FILE`).
public struct SimulatorAPIKey: Sendable, CustomStringConvertible {
    /// The key file written into the state directory (mode `0600`).
    public static let privateKeyFileName = "api-key.p8"
    /// The default key id (`--api-key-id`).
    public static let defaultKeyID = "SIMKEY0001"
    /// The default issuer id (`--issuer-id`).
    public static let defaultIssuerID = "57246542-96fe-1a63-e053-0824d011072a"

    /// The key id tokens must name (`kid`).
    public var keyID: String
    /// The issuer id tokens must name (`iss`).
    public var issuerID: String
    // Raw bytes, because swift-crypto's keys are not `Sendable` on Linux.
    private let privateKeyBytes: Data

    /// Wraps a key.
    public init(keyID: String, issuerID: String, privateKey: P256.Signing.PrivateKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        privateKeyBytes = privateKey.rawRepresentation
    }

    /// A fresh key.
    public static func generate(keyID: String = defaultKeyID, issuerID: String = defaultIssuerID) -> SimulatorAPIKey {
        SimulatorAPIKey(keyID: keyID, issuerID: issuerID, privateKey: P256.Signing.PrivateKey())
    }

    /// Loads `api-key.p8` from `directory`, or creates and writes one there.
    public static func loadOrCreate(stateDirectory directory: URL, keyID: String, issuerID: String) throws
        -> SimulatorAPIKey
    {
        let url = directory.appendingPathComponent(privateKeyFileName)
        if let pem = try? String(contentsOf: url, encoding: .utf8) {
            return SimulatorAPIKey(
                keyID: keyID, issuerID: issuerID, privateKey: try P256.Signing.PrivateKey(pemRepresentation: pem))
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = generate(keyID: keyID, issuerID: issuerID)
        try Data(key.privateKeyPEM.utf8).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return key
    }

    /// The private key as a `.p8` file's text (PKCS#8 PEM).
    public var privateKeyPEM: String { privateKey.pemRepresentation }

    /// The public half, which checks token signatures.
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    private var privateKey: P256.Signing.PrivateKey {
        // The bytes came from a valid key of this type.
        try! P256.Signing.PrivateKey(rawRepresentation: privateKeyBytes)
    }

    /// The client-side key for `bundleID`, as the job would load it from the `.p8` file.
    public func serverAPIKey(bundleID: String) -> ServerAPIKey {
        ServerAPIKey(keyID: keyID, issuerID: issuerID, bundleID: bundleID, privateKey: privateKey)
    }

    /// Key id and issuer id; never the key.
    public var description: String { "SimulatorAPIKey(kid: \(keyID), iss: \(issuerID), key: <redacted>)" }
}
