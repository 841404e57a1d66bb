import Crypto
import Foundation

/// The App Store Connect API key that signs Server API requests: a `.p8` P-256 private key with
/// its key id (`APPSTORE_KEY_ID`) and issuer id (`APPSTORE_ISSUER_ID`), for one app.
///
/// Its descriptions never show the private key: a configuration dump or a log line that
/// interpolates it prints `<redacted>` in its place.
public struct ServerAPIKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The key's id in App Store Connect (the JWT header's `kid`).
    public var keyID: String
    /// The team's issuer id (the JWT's `iss`).
    public var issuerID: String
    /// The app's bundle id (the JWT's `bid`).
    public var bundleID: String
    // swift-crypto's keys are not `Sendable` on Linux; their 32 raw bytes are.
    private let privateKeyBytes: Data

    /// The signing key.
    var privateKey: P256.Signing.PrivateKey {
        // The bytes came from a valid key of this type.
        try! P256.Signing.PrivateKey(rawRepresentation: privateKeyBytes)
    }

    /// Creates a key from a P-256 private key.
    public init(keyID: String, issuerID: String, bundleID: String, privateKey: P256.Signing.PrivateKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        privateKeyBytes = privateKey.rawRepresentation
    }

    /// Creates a key from the text of a `.p8` file (PKCS#8 PEM, as App Store Connect hands it out).
    public init(keyID: String, issuerID: String, bundleID: String, privateKeyPEM: String) throws(ServerAPIKeyError) {
        self.init(keyID: keyID, issuerID: issuerID, bundleID: bundleID, privateKey: try Self.parse(privateKeyPEM))
    }

    /// Reads a `.p8` file (`APPSTORE_PRIVATE_KEY_FILE`).
    public init(keyID: String, issuerID: String, bundleID: String, privateKeyFile path: String)
        throws(ServerAPIKeyError)
    {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable("cannot read \(path)") }
        let key: P256.Signing.PrivateKey
        do {
            key = try Self.parse(String(decoding: data, as: UTF8.self))
        } catch {
            throw .unreadable("\(path): \(error.reason)")
        }
        self.init(keyID: keyID, issuerID: issuerID, bundleID: bundleID, privateKey: key)
    }

    private static func parse(_ pem: String) throws(ServerAPIKeyError) -> P256.Signing.PrivateKey {
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            // swift-crypto's error is not echoed: it could quote key material.
            throw .unreadable("not a PEM P-256 private key (a .p8 file from App Store Connect)")
        }
    }

    /// The public half, for checking tokens (the simulator, tests).
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// Key id, issuer id and bundle id; never the key.
    public var description: String {
        "ServerAPIKey(kid: \(keyID), iss: \(issuerID), bid: \(bundleID), key: <redacted>)"
    }
    /// Same as ``description``.
    public var debugDescription: String { description }
}

/// A Server API key file could not be used.
public enum ServerAPIKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file is missing or not a P-256 private key in PEM.
    case unreadable(String)

    /// Why, without key material.
    public var reason: String {
        switch self {
        case .unreadable(let reason): reason
        }
    }

    /// `APPSTORE_PRIVATE_KEY_FILE: <reason>`.
    public var description: String { "APPSTORE_PRIVATE_KEY_FILE: \(reason)" }
}
