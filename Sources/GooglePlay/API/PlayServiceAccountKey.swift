import Foundation
import _CryptoExtras

/// A Google Cloud service account's JSON key file (`GOOGLE_PLAY_SERVICE_ACCOUNT_FILE`), whose
/// account has access to the apps in Play Console: it signs the OAuth 2.0 assertions that buy
/// the Developer API's access tokens.
///
/// Its descriptions never show the private key.
public struct PlayServiceAccountKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Google's token endpoint, when the file names none.
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"

    /// `client_email`: the JWT's `iss`.
    public let clientEmail: String
    /// `private_key_id`: the JWT header's `kid`.
    public let privateKeyID: String?
    /// `token_uri`: where assertions are exchanged, and the JWT's `aud`.
    public let tokenURI: String
    /// The RSA key from `private_key` (PKCS#8 PEM).
    let privateKey: _RSA.Signing.PrivateKey

    private struct File: Decodable {
        var type: String?
        var client_email: String?
        var private_key: String?
        var private_key_id: String?
        var token_uri: String?
    }

    /// Reads the key file's JSON.
    public init(json: Data) throws(PlayServiceAccountKeyError) {
        guard let file = try? JSONDecoder().decode(File.self, from: json) else {
            throw .unreadable("not a JSON service account key")
        }
        guard file.type == nil || file.type == "service_account" else {
            throw .unreadable("type is \(String(reflecting: file.type!.prefix(40))), not \"service_account\"")
        }
        guard let email = file.client_email, !email.isEmpty else { throw .unreadable("no client_email") }
        guard let pem = file.private_key, !pem.isEmpty else { throw .unreadable("no private_key") }
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            // swift-crypto's error is not echoed: it could quote key material.
            throw .unreadable("private_key is not a PEM RSA private key of 2048 bits or more")
        }
        let tokenURI = file.token_uri ?? Self.defaultTokenURI
        guard let url = URL(string: tokenURI), url.scheme == "https" || url.scheme == "http", url.host != nil else {
            throw .unreadable("token_uri is not an http(s) URL")
        }
        clientEmail = email
        privateKeyID = file.private_key_id.flatMap { $0.isEmpty ? nil : $0 }
        self.tokenURI = tokenURI
        privateKey = key
    }

    /// Reads the key file at `path`.
    public init(file path: String) throws(PlayServiceAccountKeyError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable("cannot read \(path)") }
        let key: PlayServiceAccountKey
        do {
            key = try PlayServiceAccountKey(json: data)
        } catch {
            throw .unreadable("\(path): \(error.reason)")
        }
        self = key
    }

    /// The public half, for checking assertions (the simulator, tests).
    public var publicKey: _RSA.Signing.PublicKey { privateKey.publicKey }

    /// The account and key id; never the key.
    public var description: String {
        "PlayServiceAccountKey(client_email: \(clientEmail), private_key_id: \(privateKeyID ?? "-"), "
            + "token_uri: \(tokenURI), private_key: <redacted>)"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }
}

/// A service account key file could not be used. Never quotes the key.
public enum PlayServiceAccountKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file is missing, not JSON, or lacks a usable field.
    case unreadable(String)

    /// Why.
    public var reason: String {
        switch self {
        case .unreadable(let reason): reason
        }
    }

    /// `GOOGLE_PLAY_SERVICE_ACCOUNT_FILE: <reason>`.
    public var description: String { "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE: \(reason)" }
}
