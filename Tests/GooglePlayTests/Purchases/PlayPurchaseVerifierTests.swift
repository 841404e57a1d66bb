import Foundation
import GooglePlay
import Testing

@Suite struct PlayPurchaseVerifierTests {
    let vectors: GoIAPVectors
    let normal: GoIAPVectors.Case

    init() throws {
        vectors = try GoIAPVectors.load()
        normal = try vectors.named("normal")
    }

    func verifier(_ keys: [String: String]) throws -> PlayPurchaseVerifier {
        PlayPurchaseVerifier(keys: try PlayLicenceKeys(setting: keys.map { "\($0.key)=\($0.value)" }.joined(separator: ",")))
    }

    @Test func exactlyTheNormalCaseVerifies() throws {
        var valid: [String] = []
        for vector in vectors.cases {
            guard let keys = try? PlayLicenceKeys(setting: "my.package=\(vector.pubkey_b64)") else { continue }
            let payload = GoIAPVectors.payload(purchaseData: vectors.signed_data, signature: vector.signature_b64)
            if case .valid(let purchase) = PlayPurchaseVerifier(keys: keys).verify(payload: Array(payload.utf8)) {
                #expect(purchase.json == vectors.signed_data)
                valid.append(vector.name)
            }
        }
        #expect(valid == ["normal"])
        #expect(vectors.cases.filter(\.source_expected_valid).map(\.name) == ["normal"])
    }

    @Test func theValidPurchaseReadsAsGoogleWroteIt() throws {
        let payload = GoIAPVectors.payload(purchaseData: vectors.signed_data, signature: normal.signature_b64)
        guard case .valid(let purchase) = try verifier(["my.package": normal.pubkey_b64]).verify(payload: Array(payload.utf8))
        else { Issue.record("the normal vector did not verify"); return }
        #expect(purchase.orderID == "GPA.xxxx-xxxx-xxxx-xxxxx")
        #expect(purchase.transactionID == "GPA.xxxx-xxxx-xxxx-xxxxx")
        #expect(purchase.packageName == "my.package")
        #expect(purchase.productID == "myproduct")
        #expect(purchase.purchaseTimeMillis == 1_437_564_796_303)
        #expect(purchase.purchaseState == .purchased)
        #expect(purchase.developerPayload == "user001")
        #expect(purchase.purchaseToken == "some-token")
        #expect(purchase.quantity == 1)
        #expect(!purchase.isTest)
    }

    @Test func theBrokenKeysAreRefusedWithTheirReason() throws {
        #expect(throws: PlayLicenceKeyError(package: "my.package", reason: .notBase64)) {
            try PlayLicenceKeys(setting: "my.package=\(try vectors.named("public key is invalid base64 format").pubkey_b64)")
        }
        #expect(throws: PlayLicenceKeyError(package: "my.package", reason: .notRSAPublicKey)) {
            try PlayLicenceKeys(setting: "my.package=\(try vectors.named("public key is not rsa public key").pubkey_b64)")
        }
    }

    @Test func theBrokenSignaturesAreRefusedWithTheirReason() throws {
        let cases: [(String, PlayUploadFailure)] = [
            ("signature is invalid base64 format", .signatureNotBase64),
            ("signature is invalid", .signatureMismatch),
        ]
        for (name, failure) in cases {
            let vector = try vectors.named(name)
            let payload = GoIAPVectors.payload(purchaseData: vectors.signed_data, signature: vector.signature_b64)
            let verification = try verifier(["my.package": vector.pubkey_b64]).verify(payload: Array(payload.utf8))
            #expect(verification == .invalid(failure), "\(name)")
        }
    }

    @Test(arguments: [
        // Spaces after the separators, as a pretty-printer writes them.
        #"{"orderId": "GPA.xxxx-xxxx-xxxx-xxxxx", "packageName": "my.package", "productId": "myproduct", "purchaseTime": 1437564796303, "purchaseState": 0, "developerPayload": "user001", "purchaseToken": "some-token"}"#,
        // The same members, sorted by name.
        #"{"developerPayload":"user001","orderId":"GPA.xxxx-xxxx-xxxx-xxxxx","packageName":"my.package","productId":"myproduct","purchaseState":0,"purchaseTime":1437564796303,"purchaseToken":"some-token"}"#,
        // A slash escaped, as some JSON writers do.
        #"{"orderId":"GPA.xxxx-xxxx-xxxx-xxxxx","packageName":"my.package","productId":"myproduct","purchaseTime":1437564796303,"purchaseState":0,"developerPayload":"user001","purchaseToken":"some\u002dtoken"}"#,
    ])
    func aReserialisedPurchaseDataDoesNotVerify(purchaseData: String) throws {
        let payload = GoIAPVectors.payload(purchaseData: purchaseData, signature: normal.signature_b64)
        let verification = try verifier(["my.package": normal.pubkey_b64]).verify(payload: Array(payload.utf8))
        #expect(verification == .invalid(.signatureMismatch))
    }

    @Test func aSignatureUnderAnotherPackagesKeyFails() throws {
        let payload = Array(GoIAPVectors.payload(purchaseData: vectors.signed_data, signature: normal.signature_b64).utf8)
        // The key that made the signature belongs to another app; my.package has none.
        #expect(try verifier(["other.package": normal.pubkey_b64]).verify(payload: payload)
            == .invalid(.packageWithoutKey("my.package")))
        // my.package has a key of its own (another RSA key), and the signature is not under it.
        let otherKey = PlayTestKeys.rsa.publicKey.derRepresentation.base64EncodedString()
        let verification = try verifier(["my.package": otherKey, "other.package": normal.pubkey_b64]).verify(payload: payload)
        #expect(verification == .invalid(.signatureMismatch))
    }
}
