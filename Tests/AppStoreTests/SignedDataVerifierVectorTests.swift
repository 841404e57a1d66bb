import AppStoreTestSupport
import Foundation
import Testing
import X509

@testable import AppStore

@Suite("JWS verification against the vectors")
struct SignedDataVerifierVectorTests {
    static func jws(_ name: String) throws -> String { try Vectors.text("sk2/\(name)") }

    static func realVerifier(validationTime: SignedDataVerifier.ValidationTime = .signedDate) throws
        -> SignedDataVerifier
    {
        SignedDataVerifier(
            configuration: .init(
                trustedRoots: TrustedRoots([try Vectors.certificate("AppleRootCA-G3.cer")]),
                bundleIds: ["com.goodheartapp", "com.Abilities"],
                environments: [.sandbox],
                validationTime: validationTime
            )
        )
    }

    static func mockVerifier(
        bundleIds: Set<String> = ["com.example"],
        environments: Set<AppStoreEnvironment> = [.sandbox],
        appAppleId: Int64? = nil
    ) throws -> SignedDataVerifier {
        SignedDataVerifier(
            configuration: .init(
                trustedRoots: TrustedRoots([try Vectors.certificate("apple-lib-testCA.der")]),
                bundleIds: bundleIds, environments: environments, appAppleId: appAppleId
            )
        )
    }

    static func notificationBody() throws -> String {
        try Vectors.text("sk2/real-sandbox-TEST-notification.signedPayload.json")
    }

    // MARK: Real App Store JWS

    @Test("the real sandbox consumable transaction verifies at its signedDate and decodes")
    func realTransactionVerifies() async throws {
        let result = try await Self.realVerifier().verifyTransaction(Self.jws("real-sandbox-consumable-transaction.app_store_server_api.jws"))
        let transaction = try #require(result.payload, "\(result)")
        #expect(transaction.transactionId == "2000000847061981")
        #expect(transaction.originalTransactionId == "2000000847061981")
        #expect(transaction.bundleId == "com.goodheartapp")
        #expect(transaction.productId == "gh_super_good_ticket_1")
        #expect(transaction.purchaseDate?.millisecondsSince1970 == 1_738_645_560_000)
        #expect(transaction.originalPurchaseDate?.millisecondsSince1970 == 1_738_645_560_000)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .consumable)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.signedDate?.millisecondsSince1970 == 1_739_161_772_561)
        #expect(transaction.environment == .sandbox)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.storefront == "JPN")
        #expect(transaction.storefrontId == "143462")
        #expect(transaction.price == 230_000)
        #expect(transaction.currency == "JPY")
        #expect(transaction.webOrderLineItemId == nil)
        #expect(transaction.expiresDate == nil)
        #expect(transaction.appAccountToken == nil)
    }

    @Test("the real sandbox renewal info verifies and decodes")
    func realRenewalInfoVerifies() async throws {
        let result = try await Self.realVerifier().verifyRenewalInfo(Self.jws("real-sandbox-renewalInfo.go-iap.jws"))
        let info = try #require(result.payload, "\(result)")
        #expect(info.originalTransactionId == "2000000335310644")
        #expect(info.autoRenewProductId == "co.ringalarm.swtich.quarterly2")
        #expect(info.productId == "co.ringalarm.swtich.quarterly2")
        #expect(info.autoRenewStatus == .on)
        #expect(info.signedDate?.millisecondsSince1970 == 1_684_822_778_492)
        #expect(info.recentSubscriptionStartDate?.millisecondsSince1970 == 1_684_822_738_000)
        #expect(info.environment == .sandbox)
    }

    @Test("the real TEST notification body verifies and decodes")
    func realNotificationVerifies() async throws {
        let result = try await Self.realVerifier().verifyNotificationBody(Self.notificationBody())
        let notification = try #require(result.payload, "\(result)")
        #expect(notification.payload.notificationType == .test)
        #expect(notification.notificationUUID == "5e09dcfc-205e-4ea1-9883-96676f394992")
        #expect(notification.payload.data?.bundleId == "com.Abilities")
        #expect(notification.payload.data?.environment == .sandbox)
        #expect(notification.payload.version == "2.0")
        #expect(notification.payload.signedDate?.millisecondsSince1970 == 1_662_122_492_884)
        #expect(notification.transaction == nil)
        #expect(notification.renewalInfo == nil)
    }

    @Test("real JWS fail when checked now: their leaves have expired")
    func realJWSFailNow() async throws {
        let verifier = try Self.realVerifier(validationTime: .now)
        let transaction = try await verifier.verifyTransaction(Self.jws("real-sandbox-consumable-transaction.app_store_server_api.jws"))
        let renewal = try await verifier.verifyRenewalInfo(Self.jws("real-sandbox-renewalInfo.go-iap.jws"))
        let notification = try await verifier.verifyNotificationBody(Self.notificationBody())
        for failure in [transaction.failure, renewal.failure, notification.failure] {
            guard case .untrustedChain = failure else {
                Issue.record("expected an untrusted chain now, got \(String(describing: failure))")
                continue
            }
        }
    }

    @Test("real JWS are not trusted by Apple's test CA")
    func realJWSFailWithTestRoot() async throws {
        let verifier = SignedDataVerifier(
            configuration: .init(
                trustedRoots: TrustedRoots([try Vectors.certificate("apple-lib-testCA.der")]),
                bundleIds: ["com.goodheartapp"], environments: [.sandbox]
            )
        )
        let result = try await verifier.verifyTransaction(Self.jws("real-sandbox-consumable-transaction.app_store_server_api.jws"))
        guard case .untrustedChain = result.failure else {
            Issue.record("\(result)")
            return
        }
    }

    @Test("the bundled roots verify real JWS by default")
    func bundledRootsVerifyRealJWS() async throws {
        let verifier = SignedDataVerifier(configuration: .init(bundleIds: ["com.goodheartapp"]))
        let result = try await verifier.verifyTransaction(Self.jws("real-sandbox-consumable-transaction.app_store_server_api.jws"))
        #expect(result.payload?.transactionId == "2000000847061981", "\(result)")
    }

    @Test("a production-only verifier rejects the real sandbox transaction for its environment")
    func sandboxRejectedInProduction() async throws {
        let verifier = SignedDataVerifier(
            configuration: .init(bundleIds: ["com.goodheartapp"], environments: [.production])
        )
        let result = try await verifier.verifyTransaction(Self.jws("real-sandbox-consumable-transaction.app_store_server_api.jws"))
        #expect(result.failure == .environmentNotAccepted("Sandbox"))
    }

    @Test("a verifier for another app rejects the real transaction for its bundle id")
    func otherBundleRejected() async throws {
        let verifier = SignedDataVerifier(configuration: .init(bundleIds: ["com.example.other"]))
        let result = try await verifier.verifyTransaction(Self.jws("real-sandbox-consumable-transaction.app_store_server_api.jws"))
        #expect(result.failure == .bundleIdNotAccepted("com.goodheartapp"))
    }

    @Test("Apple's 2025 signing chain (leaf, WWDR G6, G3) is trusted at its effective date, not by the test CA")
    func appleChain2025() async throws {
        let pem = try Vectors.data("certs/apple-real-x5c-chain-2025.pem")
        let chain = try TrustedRoots(derOrPEM: Array(pem)).certificates
        #expect(chain.count == 3)
        let x5c = try chain.map(TestCertificateAuthority.base64)
        let effective = Date(timeIntervalSince1970: 1_761_962_975)
        let trusted = try await Self.realVerifier().trustedLeafKey(leaf: x5c[0], intermediate: x5c[1], at: effective)
        #expect((try? trusted.get()) != nil, "\(trusted)")
        let untrusted = try await Self.mockVerifier().trustedLeafKey(leaf: x5c[0], intermediate: x5c[1], at: effective)
        guard case .failure(.untrustedChain) = untrusted else {
            Issue.record("\(untrusted)")
            return
        }
    }

    // MARK: Apple's mock JWS (test CA)

    @Test("mock transaction verifies against Apple's test CA even though its x5c[2] is another certificate")
    func mockTransactionVerifies() async throws {
        let result = try await Self.mockVerifier().verifyTransaction(Self.jws("mock-transactionInfo.jws"))
        let transaction = try #require(result.payload, "\(result)")
        #expect(transaction.environment == .sandbox)
        #expect(transaction.bundleId == "com.example")
        #expect(transaction.signedDate?.millisecondsSince1970 == 1_672_956_154_000)
    }

    @Test("mock renewal info verifies")
    func mockRenewalInfoVerifies() async throws {
        let result = try await Self.mockVerifier().verifyRenewalInfo(Self.jws("mock-renewalInfo.jws"))
        #expect(result.payload?.environment == .sandbox, "\(result)")
    }

    @Test("mock TEST notification verifies in sandbox")
    func mockNotificationVerifies() async throws {
        let result = try await Self.mockVerifier().verifyNotification(Self.jws("mock-testNotification.jws"))
        let notification = try #require(result.payload, "\(result)")
        #expect(notification.payload.notificationType == .test)
        #expect(notification.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification.payload.data?.appAppleId == 1234)
    }

    struct MockRejection: Sendable, CustomTestStringConvertible {
        var file: String
        var environments: Set<AppStoreEnvironment>
        var appAppleId: Int64?
        var bundleIds: Set<String>
        var expected: JWSVerificationFailure
        var testDescription: String { "\(file) → \(expected)" }
    }

    static let mockRejectionCases: [MockRejection] = [
        .init(
            file: "mock-testNotification.jws", environments: [.production], appAppleId: nil,
            bundleIds: ["com.example"], expected: .environmentNotAccepted("Sandbox")
        ),
        .init(
            file: "mock-testNotification.jws", environments: [.production, .sandbox], appAppleId: 1235,
            bundleIds: ["com.example"], expected: .appAppleIdMismatch(1234)
        ),
        .init(
            file: "mock-wrongBundleId.jws", environments: [.sandbox], appAppleId: nil,
            bundleIds: ["com.examplex"], expected: .bundleIdNotAccepted("com.example.wrong")
        ),
        .init(
            file: "mock-missingX5CHeaderClaim.jws", environments: [.sandbox], appAppleId: nil,
            bundleIds: ["com.example"], expected: .missingCertificateChain
        ),
    ]

    @Test("mock JWS are rejected with the reasons MANIFEST lists", arguments: mockRejectionCases)
    func mockRejections(rejection: MockRejection) async throws {
        let verifier = try Self.mockVerifier(
            bundleIds: rejection.bundleIds, environments: rejection.environments, appAppleId: rejection.appAppleId
        )
        let result = try await verifier.verifyNotification(Self.jws(rejection.file))
        #expect(result.failure == rejection.expected)
    }

    @Test("mock JWS are not trusted by the real Apple roots", arguments: ["mock-transactionInfo.jws", "mock-renewalInfo.jws"])
    func mockRejectedByRealRoots(file: String) async throws {
        let verifier = SignedDataVerifier(configuration: .init(bundleIds: ["com.example"], environments: [.sandbox]))
        let result = try await verifier.verifyRenewalInfo(Self.jws(file))
        guard case .untrustedChain = result.failure else {
            Issue.record("\(file): \(result)")
            return
        }
    }

    // MARK: Xcode

    @Test("Xcode-signed transaction and renewal info are rejected for production", arguments: [
        "xcode-signed-transaction.jws", "xcode-signed-renewal-info.jws",
    ])
    func xcodeRejected(file: String) async throws {
        let verifier = SignedDataVerifier(
            configuration: .init(bundleIds: ["com.example.naturelab.backyardbirds.example"], environments: [.production])
        )
        let transaction = try await verifier.verifyTransaction(Self.jws(file))
        let renewal = try await verifier.verifyRenewalInfo(Self.jws(file))
        #expect(transaction.failure == .environmentNotAccepted("Xcode"))
        #expect(renewal.failure == .environmentNotAccepted("Xcode"))
    }

    @Test("Xcode stays rejected even when a configuration lists it")
    func xcodeRejectedWhenConfigured() async throws {
        let verifier = SignedDataVerifier(
            configuration: .init(
                bundleIds: ["com.example.naturelab.backyardbirds.example"], environments: [.xcode, .localTesting]
            )
        )
        let result = try await verifier.verifyTransaction(Self.jws("xcode-signed-transaction.jws"))
        #expect(result.failure == .environmentNotAccepted("Xcode"))
    }

    @Test("Xcode's fractional millisecond dates decode (unverified)")
    func xcodeTransactionDecodes() throws {
        let transaction = try UnverifiedJWS.decodePayload(Self.jws("xcode-signed-transaction.jws"), as: JWSTransaction.self)
        #expect(transaction.transactionId == "0")
        #expect(transaction.originalTransactionId == "0")
        #expect(transaction.webOrderLineItemId == "0")
        #expect(transaction.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(transaction.productId == "pass.premium")
        #expect(transaction.subscriptionGroupIdentifier == "6F3A93AB")
        #expect(transaction.purchaseDate?.millisecondsSince1970 == 1_697_679_936_049)
        #expect(transaction.originalPurchaseDate?.millisecondsSince1970 == 1_697_679_936_049)
        #expect(transaction.expiresDate?.millisecondsSince1970 == 1_700_358_336_049)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .autoRenewable)
        #expect(transaction.appAccountToken == nil)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.signedDate?.millisecondsSince1970 == 1_697_679_936_056)
        #expect(transaction.revocationReason == nil)
        #expect(transaction.revocationDate == nil)
        #expect(transaction.isUpgraded == false)
        #expect(transaction.offerType == .introductory)
        #expect(transaction.offerIdentifier == nil)
        #expect(transaction.environment == .xcode)
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontId == "143441")
        #expect(transaction.transactionReason == .purchase)
    }

    @Test("Xcode renewal info decodes (unverified)")
    func xcodeRenewalInfoDecodes() throws {
        let info = try UnverifiedJWS.decodePayload(Self.jws("xcode-signed-renewal-info.jws"), as: JWSRenewalInfo.self)
        #expect(info.expirationIntent == nil)
        #expect(info.originalTransactionId == "0")
        #expect(info.autoRenewProductId == "pass.premium")
        #expect(info.productId == "pass.premium")
        #expect(info.autoRenewStatus == .on)
        #expect(info.isInBillingRetryPeriod == nil)
        #expect(info.priceIncreaseStatus == nil)
        #expect(info.gracePeriodExpiresDate == nil)
        #expect(info.signedDate?.millisecondsSince1970 == 1_697_679_936_711)
        #expect(info.environment == .xcode)
        #expect(info.recentSubscriptionStartDate?.millisecondsSince1970 == 1_697_679_936_049)
        #expect(info.renewalDate?.millisecondsSince1970 == 1_700_358_336_049)
    }

    @Test("the Xcode app transaction decodes (unverified), year-0001 purchase date included")
    func xcodeAppTransactionDecodes() throws {
        let transaction = try UnverifiedJWS.decodePayload(Self.jws("xcode-signed-app-transaction.jws"), as: AppTransaction.self)
        #expect(transaction.appAppleId == nil)
        #expect(transaction.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(transaction.applicationVersion == "1")
        #expect(transaction.versionExternalIdentifier == nil)
        #expect(transaction.originalPurchaseDate?.millisecondsSince1970 == -62_135_769_600_000)
        #expect(transaction.originalApplicationVersion == "1")
        #expect(transaction.deviceVerification == "cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u/j2H89WWKgS8N0hMsMlf")
        #expect(transaction.deviceVerificationNonce == UUID(uuidString: "48c8b92d-ce0d-4229-bedf-e61b4f9cfc92"))
        #expect(transaction.preorderDate == nil)
        #expect(transaction.receiptType == .xcode)
    }

    @Test("the Xcode app transaction is rejected by a production verifier")
    func xcodeAppTransactionRejected() async throws {
        let verifier = SignedDataVerifier(
            configuration: .init(bundleIds: ["com.example.naturelab.backyardbirds.example"], environments: [.production])
        )
        let result = try await verifier.verifyAppTransaction(Self.jws("xcode-signed-app-transaction.jws"))
        #expect(result.failure == .environmentNotAccepted("Xcode"))
    }

    @Test("the bundled roots are Apple Root CA - G3 and Apple Inc. Root")
    func bundledRoots() throws {
        let bundled = Set(TrustedRoots.apple.certificates)
        #expect(bundled == [try Vectors.certificate("AppleRootCA-G3.cer"), try Vectors.certificate("AppleIncRootCertificate.cer")])
    }

    // MARK: Apple's model fixtures

    @Test("Apple's full transaction model decodes every field, unknown ones ignored")
    func transactionModelDecodes() throws {
        let transaction = try AppStoreJSON.decoder().decode(
            JWSTransaction.self, from: Vectors.data("sk2/apple-model-signedTransaction.json")
        )
        #expect(transaction.transactionId == "23456")
        #expect(transaction.originalTransactionId == "12345")
        #expect(transaction.webOrderLineItemId == "34343")
        #expect(transaction.subscriptionGroupIdentifier == "55555")
        #expect(transaction.purchaseDate?.millisecondsSince1970 == 1_698_148_900_000)
        #expect(transaction.expiresDate?.millisecondsSince1970 == 1_698_149_000_000)
        #expect(transaction.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(transaction.revocationReason == .appIssue)
        #expect(transaction.revocationDate?.millisecondsSince1970 == 1_698_148_950_000)
        #expect(transaction.isUpgraded == true)
        #expect(transaction.offerType == .introductory)
        #expect(transaction.offerIdentifier == "abc.123")
        #expect(transaction.environment == .localTesting)
        #expect(transaction.price == 10_990)
        #expect(transaction.currency == "USD")
        #expect(transaction.offerDiscountType == .payAsYouGo)
        #expect(transaction.appTransactionId == "71134")
        #expect(transaction.offerPeriod == "P1Y")
    }

    @Test("Apple's full renewal info model decodes")
    func renewalInfoModelDecodes() throws {
        let info = try AppStoreJSON.decoder().decode(
            JWSRenewalInfo.self, from: Vectors.data("sk2/apple-model-signedRenewalInfo.json")
        )
        #expect(info.expirationIntent == .customerCancelled)
        #expect(info.autoRenewProductId == "com.example.product.2")
        #expect(info.isInBillingRetryPeriod == true)
        #expect(info.priceIncreaseStatus == .notResponded)
        #expect(info.offerType == .promotional)
        #expect(info.renewalPrice == 9990)
        #expect(info.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(info.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
    }

    @Test("unknown enum values are kept as raw values")
    func unknownEnumValuesKept() throws {
        let json = #"{"type":"Future Product","environment":"Staging","offerType":9,"inAppOwnershipType":"GIFTED"}"#
        let transaction = try AppStoreJSON.decoder().decode(JWSTransaction.self, from: Data(json.utf8))
        #expect(transaction.type?.rawValue == "Future Product")
        #expect(transaction.environment?.rawValue == "Staging")
        #expect(transaction.offerType?.rawValue == 9)
        #expect(transaction.inAppOwnershipType?.rawValue == "GIFTED")
    }

    @Test("a transaction encodes and decodes to itself, dates as whole milliseconds")
    func transactionRoundTrips() throws {
        let transaction = JWSTransaction.sample()
        let json = try AppStoreJSON.encoder().encode(transaction)
        #expect(String(decoding: json, as: UTF8.self).contains("\"signedDate\":1790000000000"))
        #expect(try AppStoreJSON.decoder().decode(JWSTransaction.self, from: json) == transaction)
    }
}
