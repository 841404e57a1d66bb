import AppStoreTestSupport
import Crypto
import Foundation
import Testing
import X509

@testable import AppStore

@Suite("JWS verification rejects forgeries")
struct SignedDataVerifierForgeryTests {
    static let signedDate = Date(timeIntervalSince1970: 1_790_000_000)

    static func verifier(trusting roots: TrustedRoots, environments: Set<AppStoreEnvironment> = [.sandbox])
        -> SignedDataVerifier
    {
        SignedDataVerifier(configuration: .init(trustedRoots: roots, bundleIds: ["com.example.coins"], environments: environments))
    }

    @Test("a JWS signed by a configured CA with Apple's OIDs verifies (the simulator's case)")
    func genuineTestChainVerifies() async throws {
        let ca = try TestCertificateAuthority()
        let result = try await Self.verifier(trusting: ca.roots).verifyTransaction(ca.sign(JWSTransaction.sample()))
        #expect(result.payload == JWSTransaction.sample())
    }

    @Test("an app transaction is checked at its receiptCreationDate")
    func appTransactionUsesReceiptCreationDate() async throws {
        let ca = try TestCertificateAuthority()
        var transaction = AppTransaction()
        transaction.bundleId = "com.example.coins"
        transaction.receiptType = .sandbox
        transaction.receiptCreationDate = Self.signedDate
        let valid = try await Self.verifier(trusting: ca.roots).verifyAppTransaction(ca.sign(transaction))
        #expect(valid.payload == transaction)
        transaction.receiptCreationDate = Date(timeIntervalSince1970: 1_950_000_000)  // after the chain expired
        let expired = try await Self.verifier(trusting: ca.roots).verifyAppTransaction(ca.sign(transaction))
        guard case .untrustedChain = expired.failure else {
            Issue.record("\(expired)")
            return
        }
    }

    @Test("alg none is refused")
    func algNone() async throws {
        let ca = try TestCertificateAuthority()
        let header = try JSONSerialization.data(withJSONObject: ["alg": "none", "x5c": try ca.x5c])
        let payload = try AppStoreJSON.encoder().encode(JWSTransaction.sample())
        let token = Base64URL.encode(header) + "." + Base64URL.encode(payload) + "."
        let result = await Self.verifier(trusting: ca.roots).verifyTransaction(token)
        #expect(result.failure == .unsupportedAlgorithm("none"))
    }

    @Test("HS256 with the leaf's public key as the HMAC secret is refused")
    func hs256WithPublicKeyAsSecret() async throws {
        let ca = try TestCertificateAuthority()
        let header = try JSONSerialization.data(withJSONObject: ["alg": "HS256", "x5c": try ca.x5c])
        let payload = try AppStoreJSON.encoder().encode(JWSTransaction.sample())
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let secret = SymmetricKey(data: Data(ca.leafKey.publicKey.pemRepresentation.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: secret)
        let token = signingInput + "." + Base64URL.encode(Data(mac))
        let result = await Self.verifier(trusting: ca.roots).verifyTransaction(token)
        #expect(result.failure == .unsupportedAlgorithm("HS256"))
    }

    @Test("a chain to a self-made root carrying Apple's OIDs is not trusted by Apple's roots")
    func selfMadeRootWithAppleOIDs() async throws {
        let ca = try TestCertificateAuthority()
        let result = try await Self.verifier(trusting: .apple).verifyTransaction(ca.sign(JWSTransaction.sample()))
        guard case .untrustedChain = result.failure else {
            Issue.record("\(result)")
            return
        }
    }

    @Test("a leaf without Apple's OID is refused")
    func leafWithoutOID() async throws {
        let ca = try TestCertificateAuthority(.init(leafHasAppleOID: false))
        let result = try await Self.verifier(trusting: ca.roots).verifyTransaction(ca.sign(JWSTransaction.sample()))
        #expect(result.failure == .leafMissingAppleOID)
    }

    @Test("an intermediate without Apple's OID is refused")
    func intermediateWithoutOID() async throws {
        let ca = try TestCertificateAuthority(.init(intermediateHasAppleOID: false))
        let result = try await Self.verifier(trusting: ca.roots).verifyTransaction(ca.sign(JWSTransaction.sample()))
        #expect(result.failure == .intermediateMissingAppleOID)
    }

    @Test("a leaf issued directly by the root (no intermediate) is refused")
    func leafSignedByRoot() async throws {
        let ca = try TestCertificateAuthority(.init(leafSignedByRoot: true))
        let result = try await Self.verifier(trusting: ca.roots).verifyTransaction(ca.sign(JWSTransaction.sample()))
        guard case .untrustedChain = result.failure else {
            Issue.record("\(result)")
            return
        }
    }

    @Test("x5c[2] is ignored: a genuine chain with a bogus third certificate verifies")
    func thirdCertificateIgnored() async throws {
        let ca = try TestCertificateAuthority()
        let other = try TestCertificateAuthority()
        let header: [String: Any] = ["alg": "ES256", "x5c": [try ca.x5c[0], try ca.x5c[1], try other.x5c[2]]]
        let result = try await Self.verifier(trusting: ca.roots).verifyTransaction(ca.sign(JWSTransaction.sample(), header: header))
        #expect(result.payload != nil, "\(result)")
    }

    @Test("the root named in x5c[2] is not trusted just because it is there")
    func rootInX5CNotTrusted() async throws {
        let ca = try TestCertificateAuthority()
        let other = try TestCertificateAuthority()
        let result = try await Self.verifier(trusting: other.roots).verifyTransaction(ca.sign(JWSTransaction.sample()))
        guard case .untrustedChain = result.failure else {
            Issue.record("\(result)")
            return
        }
    }

    @Test("x5c must hold exactly three certificates", arguments: [0, 1, 2, 4])
    func wrongCertificateCount(count: Int) async throws {
        let ca = try TestCertificateAuthority()
        let chain = try ca.x5c
        let x5c = (0..<count).map { chain[min($0, 2)] }
        let result = try await Self.verifier(trusting: ca.roots)
            .verifyTransaction(ca.sign(JWSTransaction.sample(), header: ["alg": "ES256", "x5c": x5c]))
        #expect(result.failure == .wrongCertificateCount(count))
    }

    @Test("a flipped signature byte is refused", arguments: [0, 31, 63])
    func flippedSignatureByte(index: Int) async throws {
        let ca = try TestCertificateAuthority()
        let parts = try ca.sign(JWSTransaction.sample()).split(separator: ".").map(String.init)
        var signature = try #require(Base64URL.decode(Array(parts[2].utf8)))
        signature[index] ^= 0x01
        let token = parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)
        let result = await Self.verifier(trusting: ca.roots).verifyTransaction(token)
        #expect(result.failure == .invalidSignature)
    }

    @Test("an edited payload is refused")
    func editedPayload() async throws {
        let ca = try TestCertificateAuthority()
        let parts = try ca.sign(JWSTransaction.sample()).split(separator: ".").map(String.init)
        var richer = JWSTransaction.sample()
        richer.quantity = 100
        let token = parts[0] + "." + Base64URL.encode(try AppStoreJSON.encoder().encode(richer)) + "." + parts[2]
        let result = await Self.verifier(trusting: ca.roots).verifyTransaction(token)
        #expect(result.failure == .invalidSignature)
    }

    @Test("a truncated token is malformed", arguments: [0.2, 0.5])
    func truncatedToken(fraction: Double) async throws {
        let ca = try TestCertificateAuthority()
        let token = try ca.sign(JWSTransaction.sample())
        let cut = String(token.prefix(Int(Double(token.count) * fraction)))
        let result = await Self.verifier(trusting: ca.roots).verifyTransaction(cut)
        guard case .malformed = result.failure else {
            Issue.record("\(result)")
            return
        }
    }

    @Test("a token cut inside its signature fails the signature check")
    func truncatedSignature() async throws {
        let ca = try TestCertificateAuthority()
        let token = try ca.sign(JWSTransaction.sample())
        let result = await Self.verifier(trusting: ca.roots).verifyTransaction(String(token.dropLast(10)))
        #expect(result.failure == .invalidSignature)
    }

    @Test("10 MB of garbage is refused before parsing")
    func tenMegabytesOfGarbage() async throws {
        let garbage = String(repeating: "A.b", count: 10 * 1024 * 1024 / 3)
        let result = await Self.verifier(trusting: .apple).verifyTransaction(garbage)
        guard case .tooLarge = result.failure else {
            Issue.record("\(result)")
            return
        }
    }

    @Test("structurally broken tokens are malformed", arguments: [
        "", "abc", "a.b", "a.b.c.d", "!!!.e30.sig", "e30.!!!.c2ln", "bm90IGpzb24.e30.c2ln",
    ])
    func malformedTokens(token: String) async {
        let result = await Self.verifier(trusting: .apple).verifyTransaction(token)
        guard case .malformed = result.failure else {
            Issue.record("\(token): \(result)")
            return
        }
    }

    @Test("a payload that is not a transaction is undecodable")
    func undecodablePayload() async throws {
        let ca = try TestCertificateAuthority()
        let result = try await Self.verifier(trusting: ca.roots).verifyTransaction(ca.sign(["quantity": "many"]))
        guard case .undecodablePayload = result.failure else {
            Issue.record("\(result)")
            return
        }
    }

    @Test("a leaf expired at signedDate is refused, even when valid now")
    func leafExpiredAtSignedDate() async throws {
        let ca = try TestCertificateAuthority(.init(notValidBefore: Date(timeIntervalSince1970: 1_795_000_000)))
        let result = try await Self.verifier(trusting: ca.roots).verifyTransaction(ca.sign(JWSTransaction.sample()))
        guard case .untrustedChain = result.failure else {
            Issue.record("\(result)")
            return
        }
    }

    @Test("forged Xcode and LocalTesting payloads are refused for their environment", arguments: [
        AppStoreEnvironment.xcode, .localTesting,
    ])
    func testEnvironmentsRefused(environment: AppStoreEnvironment) async throws {
        let ca = try TestCertificateAuthority()
        let token = try ca.sign(JWSTransaction.sample(environment: environment))
        let result = await Self.verifier(trusting: ca.roots, environments: [.production, .sandbox]).verifyTransaction(token)
        #expect(result.failure == .environmentNotAccepted(environment.rawValue))
    }

    @Test("a transaction of another app is refused for its bundle id")
    func foreignBundle() async throws {
        let ca = try TestCertificateAuthority()
        let token = try ca.sign(JWSTransaction.sample(bundleId: "com.example.other"))
        let result = await Self.verifier(trusting: ca.roots).verifyTransaction(token)
        #expect(result.failure == .bundleIdNotAccepted("com.example.other"))
    }

    @Test("a notification whose nested transaction is forged is refused, naming the field")
    func nestedTransactionForged() async throws {
        let ca = try TestCertificateAuthority()
        let forger = try TestCertificateAuthority()
        var notification = NotificationPayload()
        notification.notificationType = .oneTimeCharge
        notification.notificationUUID = UUID().uuidString
        notification.signedDate = Self.signedDate
        var data = NotificationData()
        data.bundleId = "com.example.coins"
        data.environment = .sandbox
        data.signedTransactionInfo = try forger.sign(JWSTransaction.sample())
        notification.data = data
        let result = try await Self.verifier(trusting: ca.roots).verifyNotification(ca.sign(notification))
        guard case .nested(field: "signedTransactionInfo", .untrustedChain) = result.failure else {
            Issue.record("\(result)")
            return
        }
    }

    @Test("a notification's nested transaction and renewal info are verified and decoded")
    func nestedPayloadsDecoded() async throws {
        let ca = try TestCertificateAuthority()
        var renewal = JWSRenewalInfo()
        renewal.originalTransactionId = "2000000000000042"
        renewal.autoRenewStatus = .on
        renewal.environment = .sandbox
        renewal.signedDate = Self.signedDate
        var notification = NotificationPayload()
        notification.notificationType = .didRenew
        notification.notificationUUID = "0b2e3d0c-0000-4000-8000-000000000001"
        notification.signedDate = Self.signedDate
        var data = NotificationData()
        data.bundleId = "com.example.coins"
        data.environment = .sandbox
        data.signedTransactionInfo = try ca.sign(JWSTransaction.sample())
        data.signedRenewalInfo = try ca.sign(renewal)
        notification.data = data
        let body = String(decoding: try JSONEncoder().encode(SignedNotificationBody(signedPayload: ca.sign(notification))), as: UTF8.self)
        let result = await Self.verifier(trusting: ca.roots).verifyNotificationBody(body)
        let verified = try #require(result.payload, "\(result)")
        #expect(verified.notificationUUID == "0b2e3d0c-0000-4000-8000-000000000001")
        #expect(verified.transaction == JWSTransaction.sample())
        #expect(verified.renewalInfo == renewal)
    }
}

@Suite("JWS chain cache")
struct ChainCacheTests {
    @Test("thousands of JWS from one chain are verified concurrently, with one cached chain")
    func concurrentVerificationUsesOneChain() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = SignedDataVerifierForgeryTests.verifier(trusting: ca.roots)
        let tokens = try (0..<200).map { index in
            var transaction = JWSTransaction.sample()
            transaction.transactionId = String(2_000_000_000_000_000 + index)
            return try ca.sign(transaction)
        }
        let valid = await withTaskGroup(of: Bool.self) { group in
            for token in tokens {
                group.addTask { await verifier.verifyTransaction(token).payload != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(valid == tokens.count)
        #expect(verifier.cachedChainCount == 1)
    }

    @Test("a cached chain is not reused for a signedDate outside its validity")
    func cacheRespectsValidity() async throws {
        let ca = try TestCertificateAuthority(.init(leafNotValidAfter: Date(timeIntervalSince1970: 1_800_000_000)))
        let verifier = SignedDataVerifierForgeryTests.verifier(trusting: ca.roots)
        let inside = try await verifier.verifyTransaction(ca.sign(JWSTransaction.sample()))
        #expect(inside.payload != nil, "\(inside)")
        let late = try await verifier.verifyTransaction(
            ca.sign(JWSTransaction.sample(signedDate: Date(timeIntervalSince1970: 1_850_000_000)))
        )
        guard case .untrustedChain = late.failure else {
            Issue.record("\(late)")
            return
        }
    }

    @Test("a cached chain does not excuse a bad signature")
    func cacheStillChecksSignatures() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = SignedDataVerifierForgeryTests.verifier(trusting: ca.roots)
        let token = try ca.sign(JWSTransaction.sample())
        #expect(await verifier.verifyTransaction(token).payload != nil)
        let parts = token.split(separator: ".").map(String.init)
        var other = JWSTransaction.sample()
        other.transactionId = "1"
        let forged = parts[0] + "." + Base64URL.encode(try AppStoreJSON.encoder().encode(other)) + "." + parts[2]
        #expect(await verifier.verifyTransaction(forged).failure == .invalidSignature)
    }

    @Test("a cached header vouches for no other chain, and for no other signer")
    func cacheIsKeyedByTheWholeHeader() async throws {
        let ca = try TestCertificateAuthority()
        let stranger = try TestCertificateAuthority()
        let verifier = SignedDataVerifierForgeryTests.verifier(trusting: ca.roots)
        let payload = try AppStoreJSON.encoder().encode(JWSTransaction.sample())
        #expect(await verifier.verifyTransaction(try ca.sign(payloadJSON: payload)).payload != nil)

        // The same leaf under another intermediate, and the stranger's whole chain.
        let mixed = try JSONSerialization.data(
            withJSONObject: ["alg": "ES256", "x5c": [try ca.x5c[0], try stranger.x5c[1], try ca.x5c[2]]])
        guard case .untrustedChain = await verifier.verifyTransaction(try ca.sign(headerJSON: mixed, payloadJSON: payload)).failure
        else {
            Issue.record("a leaf under an untrusted intermediate verified")
            return
        }
        guard case .untrustedChain = await verifier.verifyTransaction(try stranger.sign(payloadJSON: payload)).failure else {
            Issue.record("a stranger's chain verified")
            return
        }
        // The trusted header, signed by the stranger's leaf.
        let trustedHeader = try ca.sign(payloadJSON: payload).split(separator: ".")[0]
        let strangerSigned = try stranger.sign(payloadJSON: payload).split(separator: ".")
        let signatureInput = trustedHeader + "." + strangerSigned[1]
        let signature = try stranger.leafKey.signature(for: Data(signatureInput.utf8))
        let token = signatureInput + "." + Base64URL.encode(signature.rawRepresentation)
        #expect(await verifier.verifyTransaction(token).failure == .invalidSignature)
        #expect(verifier.cachedChainCount == 1)
    }
}
