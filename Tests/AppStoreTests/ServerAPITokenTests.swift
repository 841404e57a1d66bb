import Crypto
import Foundation
import Testing

@testable import AppStore

/// The bearer token: header, claims and an ES256 signature the public key verifies.
@Suite struct ServerAPITokenTests {
    let privateKey = P256.Signing.PrivateKey()
    var key: ServerAPIKey {
        ServerAPIKey(
            keyID: "ABC123DEFG", issuerID: "57246542-96fe-1a63-e053-0824d011072a", bundleID: "com.example.coins",
            privateKey: privateKey)
    }

    @Test func theTokenCarriesApplesHeaderAndClaimsAndVerifiesWithThePublicKey() throws {
        let now = Date(timeIntervalSince1970: 1_763_000_000)
        let token = try ServerAPIToken.make(key: key, now: now)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)

        let headerData = try #require(TestJWT.decode(parts[0]))
        let header = try #require(try JSONSerialization.jsonObject(with: headerData) as? [String: String])
        #expect(header == ["alg": "ES256", "kid": "ABC123DEFG", "typ": "JWT"])

        let claimsData = try #require(TestJWT.decode(parts[1]))
        let claims = try #require(try JSONSerialization.jsonObject(with: claimsData) as? [String: Any])
        #expect(claims["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example.coins")
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_763_000_000)
        #expect((claims["exp"] as? NSNumber)?.int64Value == 1_763_000_300)
        #expect(Set(claims.keys) == ["iss", "iat", "exp", "aud", "bid"])

        // Raw r||s, 64 bytes, over "header.claims".
        let signature = try #require(TestJWT.decode(parts[2]))
        #expect(signature.count == 64)
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        #expect(privateKey.publicKey.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8)))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test func everyRequestGetsAFreshToken() throws {
        let now = Date()
        #expect(try ServerAPIToken.make(key: key, now: now) != ServerAPIToken.make(key: key, now: now))
    }

    @Test func theKeyIsReadFromAP8FileAndNeverShown() throws {
        let pem = privateKey.pemRepresentation
        #expect(pem.contains("BEGIN PRIVATE KEY"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("AuthKey_\(UUID().uuidString).p8")
        try Data(pem.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let loaded = try ServerAPIKey(keyID: "K", issuerID: "I", bundleID: "B", privateKeyFile: file.path)
        #expect(loaded.publicKey.rawRepresentation == privateKey.publicKey.rawRepresentation)
        let shown = "\(loaded) \(String(reflecting: loaded))"
        #expect(shown.contains("<redacted>"))
        #expect(!shown.contains(pem.split(separator: "\n")[1]))
        #expect(!shown.contains(privateKey.rawRepresentation.base64EncodedString()))

        #expect(throws: ServerAPIKeyError.self) {
            try ServerAPIKey(keyID: "K", issuerID: "I", bundleID: "B", privateKeyPEM: "not a key")
        }
        #expect(throws: ServerAPIKeyError.self) {
            try ServerAPIKey(keyID: "K", issuerID: "I", bundleID: "B", privateKeyFile: "/nonexistent/AuthKey.p8")
        }
    }
}

/// The token bucket's arithmetic, without sleeping.
@Suite struct RequestPacerTests {
    @Test func requestsArrivingTogetherAreSpreadOneIntervalApart() {
        let pacer = RequestPacer(rate: 20)
        let now = ContinuousClock.now
        let waits = (0..<5).map { _ in pacer.reserve(now: now) }
        #expect(waits.map(\.milliseconds) == [0, 50, 100, 150, 200])
    }

    @Test func aQuietSpellRefillsUpToTheBurstOnly() {
        let pacer = RequestPacer(rate: 10, burst: 3)
        let start = ContinuousClock.now
        _ = (0..<3).map { _ in pacer.reserve(now: start) }
        // Ten seconds later the bucket holds 3 again, not 100.
        let later = start + .seconds(10)
        let waits = (0..<4).map { _ in pacer.reserve(now: later) }
        #expect(waits.map(\.milliseconds) == [0, 0, 0, 100])
    }
}
