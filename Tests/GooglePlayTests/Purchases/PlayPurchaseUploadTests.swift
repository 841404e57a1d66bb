import Foundation
import GooglePlay
import Testing

@Suite struct PlayPurchaseUploadTests {
    static let purchaseData =
        #"{"orderId":"GPA.3312-5678-9012-34567..2","packageName":"com.example.app","productId":"gems_100","purchaseTime":1767225600123,"purchaseState":0,"purchaseToken":"tok.en-1","quantity":3,"acknowledged":false,"autoRenewing":true,"obfuscatedAccountId":"a1b2","obfuscatedProfileId":"p9","purchaseType":0,"unknownField":{"x":[1,2]}}"#

    static func payload(_ purchaseData: String, signature: String = "c2lnbmF0dXJl") -> String {
        GoIAPVectors.payload(purchaseData: purchaseData, signature: signature)
    }

    @Test func aPayloadKeepsPurchaseDataExactlyAsSent() throws {
        let upload = try PlayPurchaseUpload(payload: Self.payload(Self.purchaseData))
        #expect(upload.purchaseData == Self.purchaseData)
        #expect(upload.signature == Data("signature".utf8))
        let purchase = upload.purchase
        #expect(purchase.orderID == "GPA.3312-5678-9012-34567..2")
        #expect(purchase.originalOrderID == "GPA.3312-5678-9012-34567")
        #expect(purchase.transactionID == "GPA.3312-5678-9012-34567..2")
        #expect(purchase.productIDs == ["gems_100"])
        #expect(purchase.purchaseTime == Date(timeIntervalSince1970: 1_767_225_600.123))
        #expect(purchase.quantity == 3)
        #expect(purchase.acknowledged == false)
        #expect(purchase.autoRenewing == true)
        #expect(purchase.obfuscatedAccountID == "a1b2")
        #expect(purchase.obfuscatedProfileID == "p9")
        #expect(purchase.isTest)
    }

    /// A client that wrapped the signature or padded it: white space and line breaks at its ends
    /// (a no-break space, a line separator too) are not part of it; inside it they are not base64.
    @Test(arguments: [
        ("c2lnbmF0dXJl\n", true), ("\r\n c2lnbmF0dXJl\t", true), ("\u{A0}c2lnbmF0dXJl\u{2028}", true),
        ("c2lnbmF0dXJl", true), ("c2lnbm F0dXJl", false), (" \n ", false),
    ])
    func aSignaturesSurroundingWhiteSpaceIsNotPartOfIt(signature: String, decodes: Bool) throws {
        let payload = String(decoding: try JSONEncoder().encode(["purchaseData": Self.purchaseData, "signature": signature]),
                             as: UTF8.self)
        if decodes {
            #expect(try PlayPurchaseUpload(payload: payload).signature == Data("signature".utf8))
        } else {
            #expect(throws: PlayUploadFailure.signatureNotBase64) { try PlayPurchaseUpload(payload: payload) }
        }
    }

    @Test func aLicenceTestersPurchaseIsKeyedByItsToken() throws {
        let data = #"{"packageName":"com.example.app","productIds":["a","b"],"purchaseTime":1,"purchaseState":4,"purchaseToken":"tok"}"#
        let purchase = try PlayPurchaseData(json: data)
        #expect(purchase.orderID == nil)
        #expect(purchase.transactionID == "tok")
        #expect(purchase.originalOrderID == "tok")
        #expect(purchase.productID == "a")
        #expect(purchase.productIDs == ["a", "b"])
        #expect(purchase.purchaseState == .pending)
        #expect(purchase.quantity == 1)
        #expect(purchase.purchaseType == nil && !purchase.isTest)
    }

    @Test(arguments: [
        ("GPA.1234-5678-9012-34567", "GPA.1234-5678-9012-34567"),
        ("GPA.1234-5678-9012-34567..0", "GPA.1234-5678-9012-34567"),
        ("GPA.1234-5678-9012-34567..12", "GPA.1234-5678-9012-34567"),
        ("GPA.1234-5678-9012-34567..", "GPA.1234-5678-9012-34567.."),
        ("GPA.1234-5678-9012-34567..x", "GPA.1234-5678-9012-34567..x"),
    ])
    func theOriginalOrderDropsOnlyARenewalSuffix(orderID: String, original: String) {
        #expect(PlayPurchaseData.originalOrderID(of: orderID) == original)
    }

    static let refusals: [(String, String, PlayUploadFailure)] = [
        ("over the size cap", "{\"purchaseData\":\"" + String(repeating: "a", count: 70_000) + "\"}", .payloadTooLarge(bytes: 70_019)),
        ("not JSON", "purchaseData=abc", .payloadNotJSON),
        ("truncated JSON", #"{"purchaseData":"{}""#, .payloadNotJSON),
        ("not an object", #"["purchaseData","signature"]"#, .payloadNotObject),
        ("a repeated member", #"{"purchaseData":"{}","signature":"YQ==","purchaseData":"{}"}"#, .repeatedMember("purchaseData")),
        ("a repeated member in another case", #"{"purchaseData":"{}","signature":"YQ==","PurchaseData":"{}"}"#, .repeatedMember("PurchaseData")),
        ("no purchaseData", #"{"signature":"YQ=="}"#, .missingMember("purchaseData")),
        ("purchaseData not a string", #"{"purchaseData":{"orderId":"x"},"signature":"YQ=="}"#, .memberNotString("purchaseData")),
        ("no signature", #"{"purchaseData":"{}"}"#, .missingMember("signature")),
        ("signature not a string", #"{"purchaseData":"{}","signature":42}"#, .memberNotString("signature")),
        ("signature not base64", #"{"purchaseData":"{}","signature":"not*base64"}"#, .signatureNotBase64),
        ("a raw NUL", "{\"purchaseData\":\"{}\u{0}\",\"signature\":\"YQ==\"}", .nulCharacter),
        ("an escaped NUL", #"{"purchaseData":"{}","signature":"YQ==","x":"\u0000"}"#, .nulCharacter),
        ("purchaseData not JSON", #"{"purchaseData":"orderId=1","signature":"YQ=="}"#, .purchaseDataNotObject),
        ("purchaseData not an object", #"{"purchaseData":"[1]","signature":"YQ=="}"#, .purchaseDataNotObject),
        ("purchaseData with a NUL", #"{"purchaseData":"{\"packageName\":\"a\\u0000\"}","signature":"YQ=="}"#, .nulCharacter),
        ("purchaseData with a repeated member", #"{"purchaseData":"{\"packageName\":\"a\",\"packageName\":\"b\"}","signature":"YQ=="}"#, .repeatedMember("packageName")),
    ]

    @Test func aBadPayloadIsRefusedWithItsReason() {
        for (name, payload, failure) in Self.refusals {
            #expect(throws: failure, "\(name)") { try PlayPurchaseUpload(payload: payload) }
        }
    }

    @Test(arguments: ["packageName", "productId", "purchaseToken", "purchaseTime"])
    func purchaseDataLackingARequiredFieldIsRefused(field: String) throws {
        var object = try JSONSerialization.jsonObject(with: Data(Self.purchaseData.utf8)) as! [String: Any]
        object[field] = nil
        let data = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        #expect(throws: PlayUploadFailure.purchaseDataMissingField(field)) {
            try PlayPurchaseUpload(payload: Self.payload(data))
        }
    }

    @Test func aFieldOfTheWrongTypeIsRefused() {
        let data = #"{"packageName":"a","productId":"b","purchaseTime":"soon","purchaseToken":"t"}"#
        #expect(throws: PlayUploadFailure.purchaseDataInvalidField("purchaseTime")) {
            try PlayPurchaseData(json: data)
        }
    }

    @Test func everyFailureHasAStableSnakeCaseCode() {
        for (_, _, failure) in Self.refusals {
            #expect(failure.code.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" }, "\(failure.code)")
            #expect(!failure.description.isEmpty)
        }
        #expect(PlayUploadFailure.packageWithoutKey("x").code == "package_without_key")
        #expect(PlayUploadFailure.signatureMismatch.code == "signature_mismatch")
    }
}
