import Foundation
import GooglePlay
import _CryptoExtras

/// Keys made for the tests, once per run: an RSA-2048 pair standing for a service account's key
/// (and for "another app's licence key").
enum PlayTestKeys {
    static let rsa: _RSA.Signing.PrivateKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    /// A service account key file's JSON, as Google Cloud hands it out, for `tokenURI`.
    static func serviceAccountJSON(tokenURI: String, privateKeyPEM: String = rsa.pkcs8PEMRepresentation) -> String {
        let object: [String: String] = [
            "type": "service_account",
            "project_id": "iap-reconcile-test",
            "private_key_id": "0123456789abcdef0123456789abcdef01234567",
            "private_key": privateKeyPEM,
            "client_email": "reconcile@iap-reconcile-test.iam.gserviceaccount.com",
            "client_id": "104242424242424242424",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
        ]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static func serviceAccount(tokenURI: String) throws -> PlayServiceAccountKey {
        try PlayServiceAccountKey(json: Data(serviceAccountJSON(tokenURI: tokenURI).utf8))
    }
}
