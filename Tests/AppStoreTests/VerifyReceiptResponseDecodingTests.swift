import Foundation
import Testing

@testable import AppStore

/// Recorded verifyReceipt answers (Vectors/verifyreceipt, see Vectors/MANIFEST.md section 4)
/// decode to exactly the values their sources assert.
@Suite struct VerifyReceiptResponseDecodingTests {
    static func vector(_ name: String) throws -> Data {
        let url = try #require(
            Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Vectors/verifyreceipt"))
        return try Data(contentsOf: url)
    }

    static func date(ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    @Test func revenueCatSampleHasNineTransactionsWithTheirValues() throws {
        let response = try VerifyReceiptResponse.decode(
            Self.vector("revenuecat-verifyReceiptSample1.json"), answeredBy: .production)
        #expect(response.status == 0)
        let receipt = try #require(response.receipt)
        #expect(receipt.environment == .sandbox)
        #expect(receipt.receiptType == "ProductionSandbox")
        #expect(receipt.bundleID == "com.revenuecat.sampleapp")
        #expect(receipt.applicationVersion == "4")
        #expect(receipt.originalApplicationVersion == "1.0")
        #expect(receipt.appItemID == "0")
        #expect(receipt.receiptCreationDate == Self.date(ms: 1_595_439_548_000))
        #expect(receipt.isLegacyFormat == false)
        #expect(receipt.inApp.count == 9)
        #expect(
            Set(receipt.inApp.map(\.transactionID)) == [
                "1000000692879214", "1000000692901513", "1000000692902182", "1000000692902990", "1000000692905419",
                "1000000692905971", "1000000692906727", "1000000696553650", "1000000692878476",
            ])
        #expect(receipt.inApp.allSatisfy { $0.originalTransactionID == "1000000692878476" })

        let first = receipt.inApp[0]
        #expect(first.transactionID == "1000000692879214")
        #expect(first.productID == "com.revenuecat.monthly_4.99.1_week_intro")
        #expect(first.quantity == 1)
        #expect(first.purchaseDate == Self.date(ms: 1_594_755_400_000))
        #expect(first.expiresDate == Self.date(ms: 1_594_755_700_000))
        #expect(first.webOrderLineItemID == "1000000054042695")
        #expect(first.isTrialPeriod == false)

        let annual = receipt.inApp[7]
        #expect(annual.transactionID == "1000000696553650")
        #expect(annual.productID == "com.revenuecat.annual_39.99.2_week_intro")
        #expect(annual.purchaseDate == Self.date(ms: 1_595_439_546_000))
        #expect(annual.expiresDate == Self.date(ms: 1_595_443_146_000))

        let original = receipt.inApp[8]
        #expect(original.transactionID == "1000000692878476")
        #expect(original.purchaseDate == Self.date(ms: 1_594_755_206_000))
        #expect(original.expiresDate == Self.date(ms: 1_594_755_386_000))
        #expect(original.isTrialPeriod == true)

        #expect(receipt.latestReceiptInfo.count == 9)
        let latest = try #require(receipt.latestReceiptInfo.last)
        #expect(latest.transactionID == "1000000696553650")
        #expect(latest.expiresDate == Self.date(ms: 1_595_443_146_000))  // 2020-07-22 18:39:06 UTC
        #expect(latest.subscriptionGroupIdentifier == "20662382")

        #expect(
            receipt.pendingRenewalInfo == [
                .init(
                    autoRenewProductID: "com.revenuecat.annual_39.99.2_week_intro",
                    productID: "com.revenuecat.annual_39.99.2_week_intro", originalTransactionID: "1000000692878476",
                    autoRenewStatus: true)
            ])
        #expect(receipt.latestReceipt == "...")
        #expect(receipt.transactions.count == 9)
    }

    @Test func status21002HasNoReceipt() throws {
        let response = try VerifyReceiptResponse.decode(
            Self.vector("itunes-iap-vcr-verifyReceipt-response-status21002.json"), answeredBy: .sandbox)
        #expect(response == VerifyReceiptResponse(status: 21002))
    }

    @Test func legacyIOS6ResponseBecomesOneTransaction() throws {
        let response = try VerifyReceiptResponse.decode(
            Self.vector("itunes-iap-vcr-verifyReceipt-response-status0.json"), answeredBy: .sandbox)
        #expect(response.status == 0)
        let receipt = try #require(response.receipt)
        #expect(receipt.isLegacyFormat)
        // No `environment` key in this layout: the endpoint that answered (the cassette's sandbox) says it.
        #expect(receipt.environment == .sandbox)
        #expect(receipt.bundleID == "com.mindmobapp.MindMob")
        #expect(receipt.applicationVersion == "20120427")
        #expect(receipt.appItemID == "521129812")
        #expect(receipt.latestReceiptInfo.isEmpty)
        #expect(
            receipt.inApp == [
                .init(
                    transactionID: "1000000046178817", originalTransactionID: "1000000046178817",
                    productID: "com.mindmobapp.download", quantity: 1, purchaseDate: Self.date(ms: 1_335_798_355_868),
                    originalPurchaseDate: Self.date(ms: 1_335_798_355_868))
            ])
    }

    @Test func autoRenewResponseHas13InAppAnd18Latest() throws {
        let response = try VerifyReceiptResponse.decode(
            Self.vector("itunes-iap-autorenew-response2.json"), answeredBy: .production)
        let receipt = try #require(response.receipt)
        #expect(receipt.environment == .sandbox)
        #expect(receipt.bundleID == "com.example.app")
        #expect(receipt.applicationVersion == "8")
        #expect(receipt.originalApplicationVersion == "1.0")
        #expect(receipt.appItemID == "0")
        #expect(receipt.receiptCreationDate == Self.date(ms: 1_500_973_280_000))
        #expect(receipt.requestDate == Self.date(ms: 1_501_149_119_587))
        #expect(receipt.originalPurchaseDate == Self.date(ms: 1_375_340_400_000))
        #expect(receipt.inApp.count == 13)
        #expect(receipt.latestReceiptInfo.count == 18)
        #expect(receipt.inApp == Array(receipt.latestReceiptInfo.prefix(13)))

        #expect(
            receipt.inApp.last
                == .init(
                    transactionID: "1000000318407192", originalTransactionID: "1000000318012065",
                    productID: "testproduct", quantity: 1, purchaseDate: Self.date(ms: 1_500_973_279_000),
                    originalPurchaseDate: Self.date(ms: 1_500_884_005_000), expiresDate: Self.date(ms: 1_500_973_579_000),
                    webOrderLineItemID: "1000000035713887", isTrialPeriod: false))
        let latest = try #require(receipt.latestReceiptInfo.last)
        #expect(latest.transactionID == "1000000318420598")
        #expect(latest.purchaseDate == Self.date(ms: 1_500_974_910_000))
        #expect(latest.expiresDate == Self.date(ms: 1_500_975_210_000))
        #expect(latest.webOrderLineItemID == "1000000035725368")
        #expect(
            receipt.pendingRenewalInfo == [
                .init(
                    autoRenewProductID: "testproduct", productID: "testproduct", autoRenewStatus: false,
                    expirationIntent: "1", isInBillingRetryPeriod: false)
            ])
        #expect(receipt.transactions.count == 18)
    }

    @Test(arguments: [
        "itunes-iap-autorenew-response2.json", "revenuecat-verifyReceiptSample1.json",
        "itunes-iap-vcr-verifyReceipt-response-status0.json",
    ])
    func encodingWithAppleNamesDecodesToTheSameReceipt(vector: String) throws {
        let receipt = try #require(try VerifyReceiptResponse.decode(Self.vector(vector), answeredBy: .sandbox).receipt)
        let reread = try #require(
            try VerifyReceiptResponse.decode(JSONEncoder().encode(receipt), answeredBy: .production).receipt)
        var expected = receipt
        expected.isLegacyFormat = false  // written back in the modern layout
        #expect(reread == expected)
    }

    struct RetryableFlag: Sendable, CustomTestStringConvertible {
        var json: String
        var expected: Bool?
        var testDescription: String { json }
    }

    @Test(arguments: [
        RetryableFlag(json: #"{"status":21100,"is_retryable":true}"#, expected: true),
        RetryableFlag(json: #"{"status":21100,"is-retryable":true}"#, expected: true),
        RetryableFlag(json: #"{"status":21100,"is-retryable":"true"}"#, expected: true),
        RetryableFlag(json: #"{"status":"21100","is_retryable":"1"}"#, expected: true),
        RetryableFlag(json: #"{"status":21100,"is_retryable":false}"#, expected: false),
        RetryableFlag(json: #"{"status":21100}"#, expected: nil),
    ])
    func retryableFlagInEitherSpelling(_ flag: RetryableFlag) throws {
        let response = try VerifyReceiptResponse.decode(Data(flag.json.utf8), answeredBy: .production)
        #expect(response.status == 21100)
        #expect(response.isRetryable == flag.expected)
    }

    @Test func numbersAsNumbersAndUnknownFieldsAreTolerated() throws {
        let json = #"""
            {"status": 0, "environment": "Production", "brand_new_field": {"x": [1, 2]},
             "receipt": {"bundle_id": "com.example", "adam_id": 123, "in_app": [
               {"transaction_id": 42, "product_id": "coins", "quantity": 3, "purchase_date_ms": 1700000000000,
                "future_flag": "yes"}]}}
            """#
        let receipt = try #require(try VerifyReceiptResponse.decode(Data(json.utf8), answeredBy: .sandbox).receipt)
        #expect(receipt.environment == .production)
        #expect(
            receipt.inApp == [
                .init(transactionID: "42", productID: "coins", quantity: 3, purchaseDate: Self.date(ms: 1_700_000_000_000))
            ])
    }

    @Test(arguments: [
        "", "not json", #"{"receipt": {}}"#, #"{"status": 0}"#,
        #"{"status": 0, "receipt": {"bundle_id": "a", "in_app": [{"product_id": "p", "purchase_date_ms": "1"}]}}"#,
        #"{"status": 0, "receipt": {"bundle_id": "a", "in_app": [{"transaction_id": "1", "product_id": "p", "purchase_date_ms": "soon"}]}}"#,
    ])
    func bodiesThatAreNotAResponseThrow(body: String) {
        #expect(throws: (any Error).self) {
            try VerifyReceiptResponse.decode(Data(body.utf8), answeredBy: .production)
        }
    }
}
