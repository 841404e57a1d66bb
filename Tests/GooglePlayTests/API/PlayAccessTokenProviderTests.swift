import AppStore
import Crypto
import Foundation
import GooglePlay
import Testing
import _CryptoExtras

@Suite struct PlayAccessTokenProviderTests {
    @Test func theTokenIsFetchedOnceAndReused() async throws {
        let google = ScriptedGoogle()
        google.script(PlayPaths.product, [.json(PlayPaths.productBody)])
        try await withPlayClient(google) { client in
            for _ in 0..<3 {
                let outcome = try await client.productPurchase(packageName: "com.example.app", token: "tok-1", logger: quietLogger)
                #expect(outcome.value != nil)
            }
            #expect(await client.tokens.fetches == 1)
        }
        #expect(google.requests(to: "/token").count == 1)
        #expect(google.requests(to: PlayPaths.product).map(\.authorization) == Array(repeating: "Bearer ya29.first", count: 3))
    }

    @Test func theTokenIsRefreshedNearItsExpiry() async throws {
        let google = ScriptedGoogle()
        google.script("/token", [ScriptedGoogle.token("ya29.first", expiresIn: 3599), ScriptedGoogle.token("ya29.second")])
        google.script(PlayPaths.product, [.json(PlayPaths.productBody)])
        let clock = TestClock()
        try await withPlayClient(google, clock: clock) { client in
            _ = try await client.productPurchase(packageName: "com.example.app", token: "tok-1", logger: quietLogger)
            clock.advance(3000)  // 599 s left: still more than the 5-minute margin
            _ = try await client.productPurchase(packageName: "com.example.app", token: "tok-1", logger: quietLogger)
            clock.advance(400)  // 199 s left: refreshed
            _ = try await client.productPurchase(packageName: "com.example.app", token: "tok-1", logger: quietLogger)
        }
        #expect(google.requests(to: "/token").count == 2)
        #expect(google.requests(to: PlayPaths.product).map(\.authorization)
            == ["Bearer ya29.first", "Bearer ya29.first", "Bearer ya29.second"])
    }

    @Test func concurrentCallersShareOneRefresh() async throws {
        var slow = ScriptedGoogle.token("ya29.slow")
        slow.delay = .milliseconds(300)
        let google = ScriptedGoogle(token: slow)
        try await withPlayClient(google) { client in
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<10 { group.addTask { try await client.tokens.accessToken(logger: quietLogger) } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(tokens == Array(repeating: "ya29.slow", count: 10))
        }
        #expect(google.requests(to: "/token").count == 1)
    }

    @Test func theAssertionIsSignedByTheKeyAndSaysWhatGoogleAsks() async throws {
        let google = ScriptedGoogle()
        let clock = TestClock()
        try await withPlayClient(google, clock: clock) { client in
            _ = try await client.tokens.accessToken(logger: quietLogger)
        }
        let request = try #require(google.requests(to: "/token").first)
        #expect(request.method == "POST")
        #expect(request.contentType == "application/x-www-form-urlencoded")
        var form: [String: String] = [:]
        for pair in request.body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            form[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        #expect(form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
        let parts = try #require(form["assertion"]).split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let signature = try #require(Self.base64URL(parts[2]))
        let valid = PlayTestKeys.rsa.publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature),
            for: SHA256.hash(data: Data((parts[0] + "." + parts[1]).utf8)), padding: .insecurePKCS1v1_5)
        #expect(valid)
        let header = try JSONSerialization.jsonObject(with: try #require(Self.base64URL(parts[0]))) as? [String: Any]
        #expect(header?["alg"] as? String == "RS256")
        #expect(header?["typ"] as? String == "JWT")
        #expect(header?["kid"] as? String == "0123456789abcdef0123456789abcdef01234567")
        let claims = try JSONSerialization.jsonObject(with: try #require(Self.base64URL(parts[1]))) as? [String: Any]
        #expect(claims?["iss"] as? String == "reconcile@iap-reconcile-test.iam.gserviceaccount.com")
        #expect(claims?["scope"] as? String == "https://www.googleapis.com/auth/androidpublisher")
        #expect((claims?["aud"] as? String)?.hasSuffix("/token") == true)
        let iat = try #require(claims?["iat"] as? Int)
        #expect(iat == Int(clock.now.timeIntervalSince1970))
        #expect(claims?["exp"] as? Int == iat + 3600)
    }

    @Test func aRefusedAssertionIsAConfigurationErrorWithoutSecrets() async throws {
        let google = ScriptedGoogle(token: .json(#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#, status: 400))
        try await withPlayClient(google) { client in
            do {
                _ = try await client.productPurchase(packageName: "com.example.app", token: "tok-1", logger: quietLogger)
                Issue.record("a refused assertion did not throw")
            } catch let error as PlayAPIConfigurationError {
                #expect(error.endpoint == .token)
                #expect(error.httpStatus == 400)
                #expect(error.reason == "invalid_grant")
                #expect(error.description.contains("reconcile@iap-reconcile-test.iam.gserviceaccount.com"))
                #expect(!error.description.contains("PRIVATE KEY"))
            }
        }
        #expect(google.requests(to: "/token").count == 1)
    }

    static func base64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

@Suite struct PlayServiceAccountKeyTests {
    @Test func theKeyFileIsReadAndItsDescriptionHidesTheKey() throws {
        let key = try PlayTestKeys.serviceAccount(tokenURI: "https://oauth2.googleapis.com/token")
        #expect(key.clientEmail == "reconcile@iap-reconcile-test.iam.gserviceaccount.com")
        #expect(key.privateKeyID == "0123456789abcdef0123456789abcdef01234567")
        #expect(key.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(key.publicKey.derRepresentation == PlayTestKeys.rsa.publicKey.derRepresentation)
        #expect(!"\(key)".contains("PRIVATE"))
        #expect(!String(reflecting: key).contains(PlayTestKeys.rsa.pkcs8PEMRepresentation.dropFirst(40).prefix(40)))
    }

    @Test func aBadKeyFileSaysWhyWithoutTheKey() {
        let pem = PlayTestKeys.rsa.pkcs8PEMRepresentation
        let broken = String(pem.prefix(200)) + "garbage"
        let cases: [(String, String)] = [
            ("not json", "not a JSON service account key"),
            (#"{"type":"authorized_user","client_email":"a","private_key":"b"}"#, "not \"service_account\""),
            (#"{"type":"service_account","private_key":"b"}"#, "no client_email"),
            (#"{"type":"service_account","client_email":"a"}"#, "no private_key"),
            (PlayTestKeys.serviceAccountJSON(tokenURI: "https://x/token", privateKeyPEM: broken), "not a PEM RSA private key"),
            (PlayTestKeys.serviceAccountJSON(tokenURI: "ftp://x/token"), "token_uri"),
        ]
        for (json, reason) in cases {
            do {
                _ = try PlayServiceAccountKey(json: Data(json.utf8))
                Issue.record("accepted: \(reason)")
            } catch {
                #expect(error.description.contains(reason), "\(error)")
                #expect(!error.description.contains("MII"))
            }
        }
    }
}
