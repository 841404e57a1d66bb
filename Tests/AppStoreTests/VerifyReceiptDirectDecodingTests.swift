import AppStoreSimulator
import Foundation
import PropertyBased
import Testing

@testable import AppStore

/// Apple's verifyReceipt answers are read without `JSONDecoder` when the direct reader is certain
/// of them. Whatever it reads must be exactly what `JSONDecoder` reads; whatever it does not take
/// (or reads differently, were there such a case) it leaves to `JSONDecoder`, whose answer, value
/// or error, is then the one returned.
@Suite("Direct decoding of verifyReceipt answers")
struct VerifyReceiptDirectDecodingTests {
    /// What a reading gave: the response, or the error's full description.
    enum Outcome: Equatable, CustomStringConvertible {
        case response(VerifyReceiptResponse)
        case error(String)

        init(_ read: () throws -> VerifyReceiptResponse) {
            do { self = .response(try read()) } catch { self = .error(String(reflecting: error)) }
        }

        var description: String {
            switch self {
            case .response(let response): "\(response)"
            case .error(let error): "error: \(error)"
            }
        }
    }

    static func byDecoder(_ json: [UInt8]) -> Outcome {
        Outcome { try VerifyReceiptResponse.decodeWithJSONDecoder(json, answeredBy: .production) }
    }

    /// The direct reader's outcome; nil when it left the body to `JSONDecoder`.
    static func direct(_ json: [UInt8]) -> Outcome? {
        do {
            return try VerifyReceiptResponse.decodeDirectly(json, answeredBy: .production).map(Outcome.response)
        } catch {
            return .error(String(reflecting: error))
        }
    }

    /// The job's reading (direct, else `JSONDecoder`) is `JSONDecoder`'s, and so is the direct
    /// reader's whenever it answers.
    static func expectSameAsJSONDecoder(_ json: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let reference = byDecoder(json)
        let job = Outcome { try VerifyReceiptResponse.decode(json, answeredBy: .production) }
        #expect(job == reference, "\(String(decoding: json, as: UTF8.self))", sourceLocation: sourceLocation)
        if let direct = direct(json) {
            #expect(direct == reference, "\(String(decoding: json, as: UTF8.self))", sourceLocation: sourceLocation)
        }
    }

    // MARK: Real answers

    @Test(arguments: [
        "revenuecat-verifyReceiptSample1.json", "itunes-iap-autorenew-response2.json",
        "itunes-iap-vcr-verifyReceipt-response-status0.json", "itunes-iap-vcr-verifyReceipt-response-status21002.json",
    ])
    func aRecordedAnswerIsReadDirectlyAsJSONDecoderReadsIt(vector: String) throws {
        let json = Array(try VerifyReceiptResponseDecodingTests.vector(vector))
        let direct = try #require(Self.direct(json), "the direct reader gave up on \(vector)")
        #expect(direct == Self.byDecoder(json))
        if case .error(let error) = direct { Issue.record("\(vector): \(error)") }
    }

    @Test func anEditedAnswerIsReadDirectlyOnlyAsJSONDecoderReadsIt() async throws {
        let json = Array(try VerifyReceiptResponseDecodingTests.vector("revenuecat-verifyReceiptSample1.json"))
        await propertyCheckEdits(of: [json]) { edited, _, mutation in
            guard let direct = Self.direct(edited) else { return }
            #expect(direct == Self.byDecoder(edited), "\(mutation)")
        }
    }

    // MARK: The simulator's answers

    /// A receipt with a random selection of what verifyReceipt lists, as the simulator answers it.
    static func receipt(seed: Int) -> VerifiedReceipt {
        var random = SplitMix64(seed: UInt64(seed))
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &random) ? value() : nil }
        func date() -> Date {
            Date(timeIntervalSince1970: Double(Int64.random(in: 0...4_000_000_000_000, using: &random)) / 1000)
        }
        func transaction() -> VerifiedReceipt.Transaction {
            let id = String(UInt64.random(in: 1...UInt64.max, using: &random))
            return VerifiedReceipt.Transaction(
                transactionID: id, originalTransactionID: maybe(id), productID: "com.example.coins.\(id.prefix(2))",
                quantity: Int.random(in: 1...10, using: &random), purchaseDate: date(), originalPurchaseDate: maybe(date()),
                expiresDate: maybe(date()), cancellationDate: maybe(date()), cancellationReason: maybe("1"),
                webOrderLineItemID: maybe("1000000054042695"), isTrialPeriod: maybe(Bool.random(using: &random)),
                isInIntroOfferPeriod: maybe(false), isUpgraded: maybe(true), promotionalOfferID: maybe("spring"),
                offerCodeRefName: maybe("CODE 1"), subscriptionGroupIdentifier: maybe("20662382"),
                inAppOwnershipType: maybe("FAMILY_SHARED"), appAccountToken: maybe(UUID().uuidString))
        }
        let inApp = (0..<Int.random(in: 0...5, using: &random)).map { _ in transaction() }
        return VerifiedReceipt(
            environment: Bool.random(using: &random) ? .production : .sandbox, bundleID: "com.example.coins",
            applicationVersion: maybe("4"), originalApplicationVersion: maybe("1.0"), receiptType: maybe("Production"),
            appItemID: maybe("0"), receiptCreationDate: maybe(date()), requestDate: maybe(date()),
            originalPurchaseDate: maybe(date()), inApp: inApp,
            latestReceiptInfo: inApp + (0..<Int.random(in: 0...3, using: &random)).map { _ in transaction() },
            pendingRenewalInfo: maybe([VerifiedReceipt.PendingRenewal(
                autoRenewProductID: "com.example.monthly", productID: "com.example.monthly",
                originalTransactionID: "1000000692878476", autoRenewStatus: true, expirationIntent: maybe("1"),
                isInBillingRetryPeriod: maybe(false))]) ?? [],
            latestReceipt: maybe("MIIT+/a="))
    }

    @Test func aSimulatorAnswerIsReadDirectlyAsJSONDecoderReadsIt() async throws {
        await propertyCheck(count: PropertyBudget.iterations, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            let receipt = Self.receipt(seed: seed)
            // As the simulator writes it, and as Apple does: slashes as they are.
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let json = Array(try encoder.encode(receipt))
            let direct = Self.direct(json)
            #expect(direct != nil, "the direct reader gave up on \(String(decoding: json, as: UTF8.self))")
            #expect(direct == Self.byDecoder(json))
            #expect(direct == .response(VerifyReceiptResponse(status: 0, receipt: receipt)))
            // Escaped slashes (JSONEncoder's default) are left to JSONDecoder, which reads the same.
            Self.expectSameAsJSONDecoder(Array(try JSONEncoder().encode(receipt)))
        }
    }

    // MARK: Odd answers

    /// A modern answer around one transaction's members (`item`), and around top-level members.
    static func answer(item: String = #""transaction_id":"1","product_id":"p","purchase_date_ms":"1700000000000""#,
                       top: String = "") -> String {
        #"{"status":0,"environment":"Production",\#(top)"receipt":{"bundle_id":"b","in_app":[{\#(item)}]}}"#
    }

    static let deeplyNested: String = String(repeating: #"{"a":"#, count: 20) + "1" + String(repeating: "}", count: 20)
    static let veryDeeplyNested: String =
        #"{"status":21002,"x":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"

    static let oddAnswers: [String] = [
        // Numbers as numbers, as strings, padded, signed, fractional, large, in exponent form.
        answer(item: #""transaction_id":1,"product_id":"p","purchase_date_ms":1700000000000,"quantity":3"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":" 1700000000000 ","quantity":" 2""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1700000000000.5""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":1.7e12"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"-1","quantity":-0"#),
        answer(item: #""transaction_id":12345678901234567890,"product_id":"p","purchase_date_ms":"1""#),
        answer(item: #""transaction_id":123456789012345678,"product_id":"p","purchase_date_ms":"1""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","quantity":01"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","quantity":"1.0""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","quantity":1.0"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"soon""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"１７""#),
        // Booleans in every spelling, and not booleans.
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","is_trial_period":true,"is_upgraded":"1""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","is_trial_period":"TRUE","is_upgraded":"False""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","is_trial_period":"yes""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","is_trial_period":1"#),
        answer(item: #""transaction_id":"1","product_id":true,"purchase_date_ms":"1""#),
        // Escapes and text beyond ASCII.
        answer(item: #""transaction_id":"1","product_id":"com\u002eexample","purchase_date_ms":"1""#),
        answer(item: #""transaction_id":"1","product_id":"a\/b\"c\\d","purchase_date_ms":"1""#),
        answer(item: #""transaction_id":"1","product_id":"caf\#u{E9} \#u{1F600}","purchase_date_ms":"1""#),
        answer(item: #""transaction_id":"1","product_id":"\ud83d\ude00","purchase_date_ms":"1""#),
        answer(item: #""transaction_id":"1","product_id":"\ud83d","purchase_date_ms":"1""#),
        answer(item: #""transaction\u005fid":"1","product_id":"p","purchase_date_ms":"1""#),
        answer(item: "\"transaction_id\":\"1\",\"product_id\":\"a\tb\",\"purchase_date_ms\":\"1\""),
        // Missing, empty and null members.
        answer(item: #""product_id":"p","purchase_date_ms":"1""#),
        answer(item: #""transaction_id":"","product_id":"p","purchase_date_ms":"1""#),
        answer(item: #""transaction_id":"1","purchase_date_ms":"1""#),
        answer(item: #""transaction_id":"1","product_id":"p""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","quantity":null,"expires_date_ms":null"#),
        answer(item: #""transaction_id":null,"product_id":"p","purchase_date_ms":"1""#),
        // iOS 6 style expires_date (milliseconds) beside the modern ones (a date text).
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","expires_date":"1700000000000""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","expires_date":"2020-07-14 19:41:40 Etc/GMT""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","expires_date":{"a":1}"#),
        // Keys given twice, known and unknown.
        answer(item: #""transaction_id":"1","transaction_id":"2","product_id":"p","purchase_date_ms":"1""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","x":1,"x":"two""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""status":21007,"#),
        // Members of other types than Apple's.
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","quantity":[1]"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","future":{"deep":[[[]],{}]}"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""latest_receipt_info":null,"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""latest_receipt_info":{"transaction_id":"2","product_id":"p","purchase_date_ms":"2"},"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""latest_receipt_info":[{"transaction_id":"2"}],"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""latest_receipt_info":[1],"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""latest_receipt_info":"none","#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""pending_renewal_info":{"product_id":"p"},"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""pending_renewal_info":[null],"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""latest_expired_receipt_info":[],"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""environment":null,"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""environment":"Xcode","#),
        // Whole bodies that are not quite an answer.
        #"{"status":0,"receipt":null}"#, #"{"status":0,"receipt":[]}"#, #"{"status":0}"#, #"{"status":"0 "}"#,
        #"{"status":21100,"is_retryable":"maybe","is-retryable":true}"#, #"{"status":21100,"is_retryable":null}"#,
        #"{"status":21002,"receipt":{"anything":[1,2,{"x":null}]}}"#, #"{"status":21002}x"#, #"{"status":21002,}"#,
        #"{"status":21002"#, #"[{"status":0}]"#, "", " ", "null", #"{"status":null}"#, #"{"status":1e3}"#,
        #"{"receipt":{"bid":"b","transaction_id":"1","product_id":"p","purchase_date_ms":"1"},"status":0}"#,
        #"{"receipt":{"bid":"b","product_id":"p","purchase_date_ms":"1"},"status":0}"#,
        #"{"receipt":{"in_app":[]},"status":0}"#,
        "\u{FEFF}{\"status\":21002}", " \n\t{ \"status\" : 21002 } \r\n",
        deeplyNested, veryDeeplyNested,
    ]

    @Test(arguments: oddAnswers)
    func anOddAnswerIsReadAsJSONDecoderReadsIt(_ json: String) {
        Self.expectSameAsJSONDecoder(Array(json.utf8))
    }

    static let usualVariants: [String] = [
        answer(item: #""transaction_id":1,"product_id":"p","purchase_date_ms":1700000000000,"quantity":3"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","quantity":null,"expires_date_ms":null"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","is_trial_period":"TRUE","is_upgraded":"False""#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1","future":{"deep":[[[]],{}]}"#),
        answer(item: #""transaction_id":"1","product_id":"p","purchase_date_ms":"1""#, top: #""latest_receipt_info":{"transaction_id":"2","product_id":"p","purchase_date_ms":"2"},"#),
        #"{"receipt":{"bid":"b","transaction_id":"1","product_id":"p","purchase_date_ms":"1"},"status":0}"#,
        " \n\t{ \"status\" : 21002 } \r\n", #"{"status":"21100","is_retryable":"1"}"#,
    ]

    @Test(arguments: usualVariants)
    func theUsualVariantsAreReadDirectly(_ json: String) {
        #expect(Self.direct(Array(json.utf8)) != nil)
    }
}
