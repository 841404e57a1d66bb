import AppStoreSimulator
import AppStoreTestSupport
import Foundation
import PropertyBased
import Testing

@testable import AppStore

/// The verifier's hot path reads base64url and transaction payloads itself. Whatever it reads
/// must be exactly what the full path (Foundation's base64, `JSONDecoder`) reads; whatever it
/// does not take, it leaves to the full path.
@Suite("Direct decoding of JWS parts")
struct JWSDirectDecodingTests {
    // MARK: base64url

    @Test func canonicalBase64URLDecodesAsTheFullDecoder() async {
        await propertyCheck(count: PropertyBudget.iterations, input: Gen<UInt8>.value(in: 0...255).array(of: 0...300)) {
            bytes in
            let text = Array(JWSText.base64URL(Data(bytes)).utf8)
            let direct = text.withUnsafeBufferPointer { Base64URL.decodeCanonical($0) }
            #expect(direct == bytes)
            #expect(direct.map { Data($0) } == Base64URL.decode(text))
        }
    }

    @Test func editedBase64URLIsDecodedDirectlyOnlyAsTheFullDecoderDecodesIt() async {
        let (kind, position, byte, length) = PropertyTests.mutation
        let genuine = Array(JWSText.base64URL(Data((0..<100).map { UInt8($0 * 7 % 256) })).utf8)
        await propertyCheck(count: PropertyBudget.iterations, input: kind, position, byte, length) {
            kind, position, byte, length in
            let text = Mutation(kind: kind, position: position, byte: byte, length: length).apply(to: genuine)
            guard let direct = text.withUnsafeBufferPointer({ Base64URL.decodeCanonical($0) }) else { return }
            #expect(Base64URL.decode(text) == Data(direct), "\(String(decoding: text, as: UTF8.self))")
        }
    }

    @Test(arguments: ["QQ=", "QQ==", "QR", "QUF", "Q", "QU+B", "QU/B", "QU B", "QUJD."])
    func nonCanonicalBase64URLIsLeftToTheFullDecoder(_ text: String) {
        #expect(Array(text.utf8).withUnsafeBufferPointer { Base64URL.decodeCanonical($0) } == nil)
    }

    // MARK: notification bodies

    @Test(arguments: [
        #"{"signedPayload":"a.b.c"}"#, #" { "signedPayload" : "a.b.c" , "other": 1 } "#, #"{"other":"x","signedPayload":"a.b.c"}"#,
    ])
    func appleBodiesAreReadDirectly(_ body: String) {
        #expect(SignedDataVerifier.signedPayload(directlyFrom: body) == "a.b.c")
    }

    @Test(arguments: [
        #"{"signedPayload":"a\/b"}"#, #"{"signedPayload":"a","signedPayload":"b"}"#, #"{"signedPayload":null}"#,
        #"{"signedPayload":1}"#, #"{"other":{"x":1},"signedPayload":"a"}"#, #"{"other":"a"}"#, #"["a"]"#, "",
    ])
    func otherBodiesAreLeftToJSONDecoder(_ body: String) {
        #expect(SignedDataVerifier.signedPayload(directlyFrom: body) == nil)
    }

    @Test func editedBodiesAreReadDirectlyOnlyAsJSONDecoderReadsThem() async {
        let genuine = [Array(#"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.eyJ4IjoxfQ.c2ln","v":2}"#.utf8)]
        await propertyCheckEdits(of: genuine) { edited, _, _ in
            guard let direct = SignedDataVerifier.signedPayload(directlyFrom: String(decoding: edited, as: UTF8.self))
            else { return }
            let decoded = try? JSONDecoder().decode(SignedNotificationBody.self, from: Data(edited))
            #expect(decoded?.signedPayload == direct, "\(String(decoding: edited, as: UTF8.self))")
        }
    }

    // MARK: transaction payloads

    /// A transaction with a random subset of its fields set, as Apple's payloads vary by type.
    static func transaction(seed: Int) -> JWSTransaction {
        var random = SplitMix64(seed: UInt64(seed))
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &random) ? value() : nil }
        let milliseconds = { Date(millisecondsSince1970: Int64.random(in: -62_000_000_000_000...4_000_000_000_000, using: &random)) }
        var transaction = JWSTransaction()
        transaction.transactionId = maybe(String(UInt64.random(in: 0...UInt64.max, using: &random)))
        transaction.originalTransactionId = maybe("2000000000000042")
        transaction.webOrderLineItemId = maybe("2000000000000777")
        transaction.bundleId = maybe("com.example.coins")
        transaction.productId = maybe("coins.100 pack/x")
        transaction.subscriptionGroupIdentifier = maybe("21000001")
        transaction.purchaseDate = maybe(milliseconds())
        transaction.originalPurchaseDate = maybe(milliseconds())
        transaction.expiresDate = maybe(milliseconds())
        transaction.quantity = maybe(Int.random(in: -5...1_000_000, using: &random))
        transaction.type = maybe([.consumable, .autoRenewable, ProductType(rawValue: "Future Type")].randomElement(using: &random)!)
        transaction.appAccountToken = maybe(UUID())
        transaction.inAppOwnershipType = maybe(.purchased)
        transaction.signedDate = maybe(milliseconds())
        transaction.revocationReason = maybe(RevocationReason(rawValue: Int.random(in: 0...9, using: &random)))
        transaction.revocationDate = maybe(milliseconds())
        transaction.revocationType = maybe(RevocationType(rawValue: "REFUND_PRORATED"))
        transaction.revocationPercentage = maybe(Int.random(in: 0...100_000, using: &random))
        transaction.isUpgraded = maybe(Bool.random(using: &random))
        transaction.offerType = maybe(OfferType(rawValue: Int.random(in: 1...4, using: &random)))
        transaction.offerIdentifier = maybe("")
        transaction.environment = maybe([.production, .sandbox, .xcode].randomElement(using: &random)!)
        transaction.storefront = maybe("USA")
        transaction.storefrontId = maybe("143441")
        transaction.transactionReason = maybe(.purchase)
        transaction.price = maybe(Int64.random(in: -1...999_999_999_999, using: &random))
        transaction.currency = maybe("USD")
        transaction.offerDiscountType = maybe(OfferDiscountType(rawValue: "PAY_AS_YOU_GO"))
        transaction.appTransactionId = maybe("704289572311456823")
        transaction.offerPeriod = maybe("P1M")
        return transaction
    }

    static func direct(_ json: some Collection<UInt8>) -> JWSTransaction? {
        Array(json).withUnsafeBufferPointer { JWSTransaction(flatJSON: $0) }
    }

    static func decoded(_ json: some Collection<UInt8>) -> JWSTransaction? {
        try? AppStoreJSON.decoder().decode(JWSTransaction.self, from: Data(json))
    }

    @Test func aFlatPayloadIsReadDirectlyAsJSONDecoderReadsIt() async throws {
        await propertyCheck(count: PropertyBudget.iterations, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            let transaction = Self.transaction(seed: seed)
            let json = try AppStoreJSON.encoder().encode(transaction)
            let direct = Self.direct(json)
            #expect(direct != nil, "the direct reader gave up on \(String(decoding: json, as: UTF8.self))")
            #expect(direct == Self.decoded(json))
            #expect(direct == transaction)
        }
    }

    @Test func anEditedPayloadIsReadDirectlyOnlyAsJSONDecoderReadsIt() async throws {
        let json = Array(try AppStoreJSON.encoder().encode(Self.transaction(seed: 7)))
        await propertyCheckEdits(of: [json]) { edited, _, _ in
            guard let direct = Self.direct(edited) else { return }
            #expect(direct == Self.decoded(edited), "\(String(decoding: edited, as: UTF8.self))")
        }
    }

    @Test(arguments: [
        #"{"productId":"coins\u002e100"}"#, #"{"productId":"caf\#u{E9}"}"#, #"{"signedDate":1697679936049.7297}"#,
        #"{"signedDate":1e12}"#, #"{"quantity":"1"}"#, #"{"quantity":01}"#, #"{"quantity":1.0}"#,
        #"{"quantity":1,"quantity":2}"#, #"{"extra":1,"extra":2}"#, #"{"extra":{"a":1}}"#, #"{"extra":[1]}"#,
        #"{"appAccountToken":"not-a-uuid"}"#, #"{"type":1}"#, #"{"isUpgraded":"true"}"#, #"{"quantity":1}x"#,
        #"{"quantity":1,}"#, #"[1]"#, #"{"price":1234567890123456789}"#, #"{"signedDate":1000000000000000}"#,
    ])
    func unusualPayloadsAreLeftToJSONDecoder(_ json: String) {
        #expect(Self.direct(Array(json.utf8)) == nil)
        // What the verifier then returns is JSONDecoder's answer, value or error.
        let viaVerifier = try? JWSTransaction(appStoreJSON: Array(json.utf8))
        #expect(viaVerifier == Self.decoded(Array(json.utf8)))
    }

    @Test func nullAndUnknownScalarsReadAsJSONDecoderReadsThem() throws {
        let json = #" { "quantity" : null , "future": "x", "futureNumber": -12, "isUpgraded": false, "price": 0 } "#
        let direct = try #require(Self.direct(Array(json.utf8)))
        #expect(direct == Self.decoded(Array(json.utf8)))
        #expect(direct.quantity == nil && direct.isUpgraded == false && direct.price == 0)
    }
}
