import Foundation
import SwiftASN1
import Testing

@testable import AppStore

/// What MANIFEST.md states about each real PKCS#7 receipt.
struct ReceiptFacts: Sendable, CustomTestStringConvertible {
    var file: String
    var environment: AppReceipt.Environment
    var bundleId: String
    var appVersion: String
    var creationDate: Date
    var purchaseCount: Int
    var transactionIds: Set<String>
    var productIds: Set<String>

    var testDescription: String { file }

    static let all: [ReceiptFacts] = [
        .init(
            file: "tpinappreceipt-receipt-production.b64", environment: .production,
            bundleId: "org.getpure.pure-iphone", appVersion: "15741",
            creationDate: Vectors.date("2024-02-23T17:27:16Z"), purchaseCount: 4,
            transactionIds: ["340001196262039", "340001237736590", "340001264290434", "340001311555626"],
            productIds: ["org.getpure.pure.Week", "org.getpure.pure.Month"]
        ),
        .init(
            file: "tpinappreceipt-receipt-sandbox-g5.b64", environment: .productionSandbox,
            bundleId: "dev.bonzer.weeka.app", appVersion: "2",
            creationDate: Vectors.date("2025-12-26T18:39:47Z"), purchaseCount: 2,
            transactionIds: ["2000001092134138", "2000001092148094"],
            productIds: ["dev.bonzer.weeka.app.subscription.pro.annual"]
        ),
        .init(
            file: "tpinappreceipt-receipt-sandbox-legacy.b64", environment: .productionSandbox,
            bundleId: "com.nutcall.alert", appVersion: "32",
            creationDate: Vectors.date("2020-05-06T18:28:49Z"), purchaseCount: 187,
            transactionIds: ["1000000637840752"],
            productIds: ["com.nutcallalert.inapp.optimum", "com.nutcallalert.inapp.pro", "com.nutcallalert.inapp.lite"]
        ),
        .init(
            file: "revenuecat-receiptsample1.b64", environment: .productionSandbox,
            bundleId: "com.revenuecat.sampleapp", appVersion: "4",
            creationDate: Date(timeIntervalSince1970: 1_595_439_548), purchaseCount: 9,
            transactionIds: [
                "1000000692879214", "1000000692901513", "1000000692902182", "1000000692902990", "1000000692905419",
                "1000000692905971", "1000000692906727", "1000000696553650", "1000000692878476",
            ],
            productIds: ["com.revenuecat.monthly_4.99.1_week_intro", "com.revenuecat.annual_39.99.2_week_intro"]
        ),
        .init(
            file: "revenuecat-pr4297-sandboxReceipt2.b64", environment: .productionSandbox,
            bundleId: "com.mbaasy.ios.demo", appVersion: "1",
            creationDate: Date(timeIntervalSince1970: 1_439_452_246), purchaseCount: 7,
            transactionIds: [
                "1000000166865231", "1000000166965150", "1000000166965327", "1000000166965895", "1000000166967152",
                "1000000166967484", "1000000166967782",
            ],
            productIds: ["consumable", "monthly"]
        ),
    ]
}

@Suite("App receipt parsing")
struct ReceiptParsingTests {
    static func receipt(_ file: String) throws -> AppReceipt {
        try AppReceipt(base64Encoded: Vectors.text("receipts/\(file)"))
    }

    @Test("real receipts decode to the app fields and purchases MANIFEST lists", arguments: ReceiptFacts.all)
    func realReceiptDecodes(facts: ReceiptFacts) throws {
        let receipt = try Self.receipt(facts.file)
        #expect(receipt.payload.environment == facts.environment)
        #expect(receipt.payload.bundleId == facts.bundleId)
        #expect(receipt.payload.appVersion == facts.appVersion)
        #expect(receipt.payload.creationDate == facts.creationDate)
        #expect(receipt.inAppPurchases.count == facts.purchaseCount)
        let transactionIds = Set(receipt.inAppPurchases.compactMap(\.transactionId))
        #expect(facts.transactionIds.isSubset(of: transactionIds))
        #expect(Set(receipt.inAppPurchases.compactMap(\.productId)) == facts.productIds)
        #expect(receipt.inAppPurchases.allSatisfy { $0.quantity == 1 && $0.purchaseDate != nil })
    }

    @Test("the 187-purchase legacy receipt has the product counts MANIFEST lists")
    func largeLegacyReceiptCountsPerProduct() throws {
        let receipt = try Self.receipt("tpinappreceipt-receipt-sandbox-legacy.b64")
        let counts = Dictionary(grouping: receipt.inAppPurchases, by: { $0.productId ?? "" }).mapValues(\.count)
        #expect(counts == [
            "com.nutcallalert.inapp.optimum": 116, "com.nutcallalert.inapp.pro": 39, "com.nutcallalert.inapp.lite": 32,
        ])
        let first = try #require(receipt.inAppPurchases.first { $0.transactionId == "1000000637840752" })
        #expect(first.originalTransactionId == "1000000603177571")
        let purchase = try #require(first.purchaseDate)
        #expect(first.expiresDate == purchase.addingTimeInterval(300))
        #expect(Set(receipt.inAppPurchases.compactMap(\.transactionId)).count == 187)
    }

    @Test("the production receipt keeps offers, line items and original purchase fields")
    func productionReceiptDetails() throws {
        let receipt = try Self.receipt("tpinappreceipt-receipt-production.b64")
        #expect(receipt.payload.appItemId == 690_661_663)
        #expect(receipt.payload.originalAppVersion == "434")
        #expect(receipt.payload.originalPurchaseDate == Vectors.date("2016-08-16T15:15:43Z"))
        #expect(receipt.inAppPurchases.allSatisfy { $0.originalTransactionId == "340001196262039" })
        let week = try #require(receipt.inAppPurchases.first { $0.transactionId == "340001196262039" })
        #expect(week.productId == "org.getpure.pure.Week")
        #expect(week.webOrderLineItemId == 340_000_558_053_130)
        #expect(week.purchaseDate == Vectors.date("2023-05-09T23:20:55Z"))
        #expect(week.expiresDate == Vectors.date("2023-05-16T23:20:55Z"))
        #expect(week.promotionalOfferId == nil)
        #expect(week.cancellationDate == nil)
        let offer = try #require(receipt.inAppPurchases.first { $0.transactionId == "340001311555626" })
        #expect(offer.promotionalOfferId == "org.getpure.pure.Month.Offer.3M.PayToGo")
        #expect(offer.expiresDate == Vectors.date("2023-10-19T23:26:23Z"))
    }

    @Test("RevenueCat sample: trial flag, line item and opaque/hash fields")
    func revenueCatSampleDetails() throws {
        let receipt = try Self.receipt("revenuecat-receiptsample1.b64")
        #expect(receipt.payload.originalAppVersion == "1.0")
        #expect(receipt.payload.expirationDate == nil)
        #expect(receipt.payload.opaqueValue.map { Data($0).base64EncodedString() } == "S5Yfx+yvdaa9O5w6EvDuZA==")
        #expect(receipt.payload.sha1Hash.map { Data($0).base64EncodedString() } == "deUV5jHlBbtD8cm+XBgY/95o7zw=")
        #expect(receipt.inAppPurchases.allSatisfy { $0.originalTransactionId == "1000000692878476" })
        let first = receipt.inAppPurchases[0]
        #expect(first.transactionId == "1000000692879214")
        #expect(first.purchaseDate == Date(timeIntervalSince1970: 1_594_755_400))
        #expect(first.expiresDate == Date(timeIntervalSince1970: 1_594_755_700))
        #expect(first.webOrderLineItemId == 1_000_000_054_042_695)
        let original = try #require(receipt.inAppPurchases.first { $0.transactionId == "1000000692878476" })
        #expect(original.isTrialPeriod == true)
        #expect(first.isTrialPeriod == false)
    }

    @Test("2015 receipt: consumable without expiry, intro-offer flag absent")
    func receipt2015Details() throws {
        let receipt = try Self.receipt("revenuecat-pr4297-sandboxReceipt2.b64")
        #expect(receipt.payload.opaqueValue.map { Data($0).base64EncodedString() } == "xN1AVLC2Gge+tYX2qELgSA==")
        let consumable = try #require(receipt.inAppPurchases.first { $0.productId == "consumable" })
        #expect(consumable.transactionId == "1000000166865231")
        #expect(consumable.purchaseDate == Date(timeIntervalSince1970: 1_438_979_875))
        #expect(consumable.expiresDate == nil)
        #expect(consumable.webOrderLineItemId == 0)
        #expect(receipt.inAppPurchases.allSatisfy { $0.isInIntroOfferPeriod == nil })
        let monthly = receipt.inAppPurchases.filter { $0.productId == "monthly" }
        #expect(monthly.count == 6)
        #expect(monthly.allSatisfy { $0.originalTransactionId == "1000000166965150" })
    }

    @Test("Xcode receipts with nested OCTET STRINGs decode")
    func xcodeReceiptsDecode() throws {
        let empty = try Self.receipt("xcode-app-receipt-empty.b64")
        #expect(empty.payload.environment == .xcode)
        #expect(empty.payload.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(empty.payload.creationDate == Vectors.date("2023-10-19T01:18:54Z"))
        #expect(empty.payload.expirationDate == Vectors.date("4001-01-01T00:00:00Z"))
        #expect(empty.inAppPurchases.isEmpty)

        let withTransaction = try Self.receipt("xcode-app-receipt-with-transaction.b64")
        let purchase = try #require(withTransaction.inAppPurchases.first)
        #expect(withTransaction.inAppPurchases.count == 1)
        #expect(purchase.transactionId == "0")
        #expect(purchase.productId == "pass.premium")
        #expect(purchase.quantity == 1)
        #expect(purchase.originalTransactionId == nil)
        #expect(purchase.originalPurchaseDate == nil)
        #expect(purchase.isInIntroOfferPeriod == true)
        #expect(purchase.purchaseDate == Vectors.date("2023-10-19T01:45:36Z"))
        #expect(purchase.expiresDate == Vectors.date("2023-11-19T01:45:36Z"))
    }

    @Test("older Xcode receipts with +0100 offsets decode to the right instant")
    func offsetDatesDecode() throws {
        let receipt = try Self.receipt("tpinappreceipt-receipt-xcode.b64")
        #expect(receipt.payload.environment == .xcode)
        #expect(receipt.payload.bundleId == "net.zachariadis.cyclemaps")
        #expect(receipt.payload.appVersion == "31.10.0")
        #expect(receipt.payload.creationDate == Vectors.date("2020-07-22T17:33:15Z"))
        #expect(receipt.payload.expirationDate == Vectors.date("4001-01-01T00:00:00Z"))
        let purchase = try #require(receipt.inAppPurchases.first)
        #expect(purchase.productId == "CYCLEMAPS_PREMIUM")
        #expect(purchase.transactionId == "0")
        #expect(purchase.purchaseDate == Vectors.date("2020-07-22T17:33:14Z"))
        #expect(purchase.expiresDate == Vectors.date("2021-07-22T17:33:14Z"))
    }

    @Test(
        "receipt date strings",
        arguments: [
            ("2024-02-23T17:27:16Z", Vectors.date("2024-02-23T17:27:16Z")),
            ("2020-07-22T18:33:14+0100", Vectors.date("2020-07-22T17:33:14Z")),
            ("2020-07-22T18:33:14+01:00", Vectors.date("2020-07-22T17:33:14Z")),
            ("2020-07-22T10:33:14-0700", Vectors.date("2020-07-22T17:33:14Z")),
            ("2023-10-19T01:45:36.500Z", Vectors.date("2023-10-19T01:45:36Z").addingTimeInterval(0.5)),
            ("1970-01-01T00:00:00Z", Date(timeIntervalSince1970: 0)),
        ]
    )
    func receiptDatesParse(text: String, expected: Date) {
        #expect(ReceiptDate.parse(text) == expected)
    }

    @Test("malformed date strings are refused", arguments: ["", "2024-02-23", "2024-13-01T00:00:00Z", "2024-02-23T17:27:16", "2024-02-23T17:27:16Zjunk", "yesterday"])
    func malformedDatesAreRefused(text: String) {
        #expect(ReceiptDate.parse(text) == nil)
    }

    @Test("formatting a date gives the form receipts use", arguments: [0.0, 1_708_709_236, 64_060_588_800, -86_401])
    func receiptDatesFormatAndParseBack(seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(ReceiptDate.parse(ReceiptDate.format(date)) == date)
    }
}

@Suite("Receipt payload encoding")
struct ReceiptEncodingTests {
    @Test("every real receipt's payload re-encodes to DER that decodes to the same payload", arguments: ReceiptFacts.all)
    func realPayloadsRoundTrip(facts: ReceiptFacts) throws {
        let payload = try ReceiptParsingTests.receipt(facts.file).payload
        let encoded = try payload.derEncoded()
        #expect(try AppReceipt.Payload(berEncoded: encoded[...]) == payload)
    }

    @Test("a payload built by the simulator round-trips field by field")
    func builtPayloadRoundTrips() throws {
        let payload = AppReceipt.Payload(
            environment: .productionSandbox,
            appItemId: 0,
            bundleId: "com.example.coins",
            appVersion: "7",
            opaqueValue: [1, 2, 3, 4],
            sha1Hash: Array(repeating: 0xAB, count: 20),
            creationDate: Date(timeIntervalSince1970: 1_790_000_000),
            originalAppVersion: "1.0",
            inAppPurchases: [
                .init(
                    quantity: 3, productId: "coins.100", transactionId: "2000000000000001",
                    purchaseDate: Date(timeIntervalSince1970: 1_789_999_000),
                    originalTransactionId: "2000000000000001",
                    originalPurchaseDate: Date(timeIntervalSince1970: 1_789_999_000)
                ),
                .init(
                    quantity: 1, productId: "vip.month", transactionId: "2000000000000002",
                    purchaseDate: Date(timeIntervalSince1970: 1_789_000_000),
                    originalTransactionId: "2000000000000000",
                    expiresDate: Date(timeIntervalSince1970: 1_791_592_000),
                    webOrderLineItemId: 2_000_000_111_222_333,
                    cancellationDate: Date(timeIntervalSince1970: 1_789_500_000),
                    isTrialPeriod: false, isInIntroOfferPeriod: true, promotionalOfferId: "winback"
                ),
            ]
        )
        let decoded = try AppReceipt.Payload(berEncoded: payload.derEncoded()[...])
        #expect(decoded == payload)
    }

    @Test("encoded attributes use Apple's value types: UTF8String ids, IA5String dates, INTEGER quantities")
    func encodedValueTypes() throws {
        let purchase = AppReceipt.InAppPurchase(
            quantity: 2, productId: "p", purchaseDate: Date(timeIntervalSince1970: 0)
        )
        let attributes = try AttributeCoding.decodeSet(purchase.derEncoded()[...], context: "test")
        let byType = Dictionary(uniqueKeysWithValues: attributes.map { ($0.type, $0.value) })
        #expect(byType[1701] == [0x02, 0x01, 0x02])
        #expect(byType[1702] == [0x0C, 0x01, UInt8(ascii: "p")])
        #expect(byType[1704] == [0x16, 0x14] + Array("1970-01-01T00:00:00Z".utf8))
    }
}

/// The payload's DER fast path (`AttributeCoding.decodeDERSet`) reads exactly what swift-asn1
/// reads, and leaves every other encoding to it.
@Suite("Receipt payload: the DER fast path")
struct ReceiptDERFastPathTests {
    /// The payload's bytes inside the receipt's signed content, as `AppReceipt` reads them.
    static func payloadBytes(_ receipt: AppReceipt) throws -> [UInt8] {
        let content = receipt.signedContent
        guard content.first == 0x04 || content.first == 0x24 else { return content }
        return Array(try ASN1OctetString(berEncoded: BER.parse(content)).bytes)
    }

    @Test("Apple's real payloads and every purchase in them take the fast path and read the same", arguments: ReceiptFacts.all)
    func realPayloadsReadTheSame(facts: ReceiptFacts) throws {
        let bytes = try Self.payloadBytes(ReceiptParsingTests.receipt(facts.file))[...]
        let fast = try #require(AttributeCoding.decodeDERSet(bytes), "a real payload left the fast path")
        #expect(fast == (try AttributeCoding.decodeSetWithASN1(bytes, context: "test")))
        let purchases = fast.filter { $0.type == 17 }
        #expect(purchases.count == facts.purchaseCount)
        for purchase in purchases {
            let value = purchase.value[...]
            #expect(AttributeCoding.decodeDERSet(value) == (try AttributeCoding.decodeSetWithASN1(value, context: "test")))
        }
    }

    /// The same purchase's SET with an indefinite length, with a long length where a short one
    /// fits, and with a length byte of zero padding: BER that is not DER.
    @Test("BER that is not DER leaves the fast path and still reads the same", arguments: [0, 1, 2])
    func berThatIsNotDERFallsBack(variant: Int) throws {
        let purchase = AppReceipt.InAppPurchase(
            quantity: 2, productId: "coins.100", transactionId: "1000000000000001",
            purchaseDate: Date(timeIntervalSince1970: 1_790_000_000))
        let der = try purchase.derEncoded()
        let content: [UInt8]
        if der[1] < 0x80 { content = Array(der[2...]) } else { content = Array(der[(2 + Int(der[1] & 0x7F))...]) }
        let ber: [UInt8] = switch variant {
        case 0: [0x31, 0x80] + content + [0x00, 0x00]
        case 1: [0x31, 0x82, UInt8(content.count >> 8), UInt8(content.count & 0xFF)] + content
        default: [0x31, 0x83, 0x00, UInt8(content.count >> 8), UInt8(content.count & 0xFF)] + content
        }
        #expect(AttributeCoding.decodeDERSet(ber[...]) == nil)
        #expect(try AppReceipt.InAppPurchase(berEncoded: ber[...]) == purchase)
    }

    /// A value that is not a short primitive of the expected type, or an INTEGER not in its
    /// shortest form, is judged by swift-asn1 as before: the same value or the same refusal.
    @Test("attribute values outside the fast path are read as swift-asn1 reads them", arguments: [
        [0x02, 0x02, 0x00, 0x05], [0x02, 0x02, 0xFF, 0x85], [0x02, 0x00], [0x02, 0x09, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        [0x02, 0x01, 0x05, 0x00], [0x0C, 0x01, 0x41], [0x02, 0x81, 0x01, 0x07],
    ] as [[UInt8]])
    func valuesOutsideTheFastPath(quantity: [UInt8]) throws {
        let attributes = [
            AppReceipt.Attribute(type: 1701, value: quantity),
            AppReceipt.Attribute(type: 1702, value: [0x0C, 0x01, UInt8(ascii: "p")]),
        ]
        let set = try AttributeCoding.encodeSet(attributes)
        let library: Int64?? = {
            guard let node = try? BER.parse(quantity) else { return .some(nil) }
            return .some(try? Int64(berEncoded: node))
        }()
        let decoded = try? AppReceipt.InAppPurchase(berEncoded: set[...])
        switch library {
        case .some(.some(let value)): #expect(decoded?.quantity == Int(value))
        default: #expect(decoded == nil, "swift-asn1 refuses \(quantity); so must the receipt")
        }
    }
}

extension ReceiptDERFastPathTests {
    @Test("App Store receipts and the simulator's take the container check's DER path, Xcode's BER does not")
    func containersTakeTheDERPath() async throws {
        for genuine in try await PropertyTests.genuineReceipts() {
            #expect(SignedData.isDERSignedData(genuine.bytes))
            try SignedData.checkContainerWithASN1(genuine.bytes)
        }
        let xcode = Array(try #require(Data(
            base64Encoded: try Vectors.text("receipts/xcode-app-receipt-with-transaction.b64"),
            options: .ignoreUnknownCharacters)))
        #expect(!SignedData.isDERSignedData(xcode))
        try SignedData.checkContainerWithASN1(xcode)
    }

    /// A ContentInfo around `content`, the signedData content type first.
    static func contentInfo(_ content: [UInt8]) -> [UInt8] {
        let body: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02] + content
        return (body.count < 0x80 ? [0x30, UInt8(body.count)] : [0x30, 0x81, UInt8(body.count)]) + body
    }

    /// Framing DER does not allow, or swift-asn1 refuses, is left to swift-asn1.
    @Test("a container outside DER's framing is left to swift-asn1", arguments: [
        [0xA0, 0x80, 0x05, 0x00, 0x00, 0x00],  // an indefinite length
        [0xA0, 0x81, 0x02, 0x05, 0x00],  // a long length where a short one fits
        [0xA0, 0x82, 0x00, 0x02, 0x05, 0x00],  // a length with a zero byte in front
        [0xA0, 0x02, 0x00, 0x00],  // end-of-contents inside a definite length
        [0xA0, 0x02, 0x20, 0x00],  // [UNIVERSAL 0], constructed
        [0xA0, 0x03, 0x1F, 0x1F, 0x00],  // a long-form tag
        [0xA0, 0x03, 0x05, 0x00],  // a length past the end
        [0xA0, 0x01, 0x05, 0x00],  // a child past its parent's end
        Array(repeating: [0x30, 0x80], count: 40).flatMap { $0 } + Array(repeating: 0x00, count: 80),  // deep BER
    ] as [[UInt8]])
    func oddContainersGoToSwiftASN1(content: [UInt8]) {
        #expect(!SignedData.isDERSignedData(Self.contentInfo(content)))
    }

    @Test("DER nested deeply, but not too deeply, takes the DER path")
    func deepDER() throws {
        var nested: [UInt8] = [0x05, 0x00]
        for _ in 0..<30 { nested = [0x30, UInt8(nested.count)] + nested }
        let bytes = Self.contentInfo(nested)
        #expect(SignedData.isDERSignedData(bytes))
        try SignedData.checkContainerWithASN1(bytes)
        #expect(!SignedData.isDERSignedData(Self.contentInfo([0x30, UInt8(nested.count + 2)] + [0x30, UInt8(nested.count)] + nested)))
        #expect(!SignedData.isDERSignedData(Self.contentInfo([0x05, 0x00]) + [0x00]))  // a byte after the ContentInfo
    }

    @Test("integers at the edges of their byte lengths read back through the fast path", arguments: [
        0, 1, -1, 127, 128, -128, -129, 255, 256, 32_767, -32_769, Int64.max, Int64.min,
    ] as [Int64])
    func integersReadBack(value: Int64) throws {
        let purchase = AppReceipt.InAppPurchase(
            quantity: 1, productId: "p", purchaseDate: Date(timeIntervalSince1970: 0), webOrderLineItemId: value)
        let encoded = try purchase.derEncoded()
        #expect(AttributeCoding.decodeDERSet(encoded[...]) != nil)
        #expect(try AppReceipt.InAppPurchase(berEncoded: encoded[...]).webOrderLineItemId == value)
    }
}

/// An app receipt's contents under verifyReceipt's field names: the one decoding `reconcile
/// inspect` shows, trusted or not.
@Suite("App receipts as JSON")
struct AppReceiptJSONTests {
    @Test func aSubscriptionsExpiryAndOfferFlagsAreShown() throws {
        // Apple's app-store-server-library test resource (Vectors/MANIFEST.md, section 3a).
        guard case .app(let receipt) = try Receipt(base64Encoded: Vectors.text("receipts/xcode-app-receipt-with-transaction.b64"))
        else { Issue.record("not an app receipt"); return }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let object = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode(receipt.payload)) as? [String: Any])
        #expect(object["bundle_id"] as? String == "com.example.naturelab.backyardbirds.example")
        #expect(object["receipt_type"] as? String == "Xcode")
        #expect(object["application_version"] as? String == "1")
        #expect(object["expiration_date"] as? String == "4001-01-01T00:00:00Z")
        let purchases = try #require(object["in_app"] as? [[String: Any]])
        #expect(purchases.count == 1)
        let purchase = try #require(purchases.first)
        #expect(purchase["product_id"] as? String == "pass.premium")
        #expect(purchase["transaction_id"] as? String == "0")
        #expect(purchase["purchase_date"] as? String == "2023-10-19T01:45:36Z")
        #expect(purchase["expires_date"] as? String == "2023-11-19T01:45:36Z")
        #expect(purchase["is_in_intro_offer_period"] as? Bool == true)
        // Absent in Xcode receipts: left out, not invented.
        #expect(purchase["original_transaction_id"] == nil && purchase["original_purchase_date"] == nil)
    }

    @Test func aRenewalsWebOrderLineItemAndOriginalPurchaseAreShown() throws {
        // RevenueCat's sandbox receipt (Vectors/MANIFEST.md): nine subscription periods.
        guard case .app(let receipt) = try Receipt(base64Encoded: Vectors.text("receipts/revenuecat-receiptsample1.b64"))
        else { Issue.record("not an app receipt"); return }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let object = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode(receipt.payload)) as? [String: Any])
        let purchases = try #require(object["in_app"] as? [[String: Any]])
        let first = try #require(purchases.first { $0["transaction_id"] as? String == "1000000692879214" })
        #expect(first["web_order_line_item_id"] as? Int64 == 1_000_000_054_042_695)
        #expect(first["original_transaction_id"] as? String == "1000000692878476")
        #expect(first["expires_date"] as? Double == 1_594_755_700)
        #expect(first["original_purchase_date"] != nil)
    }
}
