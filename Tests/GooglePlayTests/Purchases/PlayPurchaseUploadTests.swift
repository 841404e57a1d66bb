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
        // The long s folds to an s, and the Kelvin sign to a k, as Go's encoding/json matches names.
        ("a repeated member folded by Unicode", "{\"purchaseData\":\"{}\",\"signature\":\"YQ==\",\"\u{17F}ignature\":1}", .repeatedMember("\u{17F}ignature")),
        ("purchaseData with a repeated member folded by Unicode", #"{"purchaseData":"{\"packageName\":\"a\",\"pac\u212Aage\u004eame\":\"b\"}","signature":"YQ=="}"#, .repeatedMember("pac\u{212A}ageName")),
        ("a repeated member in an escape", #"{"purchaseData":"{}","signature":"YQ==","purchase\u0044ata":1}"#, .repeatedMember("purchaseData")),
        ("a repeated member past the names compared in turn",
         "{" + (0..<20).map { "\"m\($0)\":\($0)," }.joined() + #""purchaseData":"{}","signature":"YQ==","M7":7}"#, .repeatedMember("M7")),
        ("nested past the depth limit", String(repeating: "[", count: 40) + String(repeating: "]", count: 40), .payloadNotJSON),
        ("a lone surrogate", #"{"purchaseData":"{}","signature":"YQ==","x":"\ud800"}"#, .payloadNotJSON),
        ("a raw control character", "{\"purchaseData\":\"{}\u{1}\",\"signature\":\"YQ==\"}", .payloadNotJSON),
        ("a raw control character in a long string",
         "{\"purchaseData\":\"{}\",\"signature\":\"YQ==\",\"x\":\"\(String(repeating: "a", count: 40))\t\(String(repeating: "a", count: 40))\"}", .payloadNotJSON),
        ("a raw NUL in a long string",
         "{\"purchaseData\":\"{}\",\"signature\":\"YQ==\",\"x\":\"\(String(repeating: "a", count: 21))\u{0}\(String(repeating: "a", count: 40))\"}", .nulCharacter),
        ("an unknown escape", #"{"purchaseData":"{}","signature":"YQ==","x":"\q"}"#, .payloadNotJSON),
        ("an unterminated escape", #"{"purchaseData":"{}","signature":"YQ==","x":"\"#, .payloadNotJSON),
    ]

    /// Escapes in `purchaseData` and in its values are read as JSON defines them; the text kept is
    /// the unescaped `purchaseData`, whose bytes are what Google signed.
    @Test func escapesAreReadAtEveryLevel() throws {
        let purchaseData = #"{"packageName":"com.example.app","productId":"gems_100","purchaseTime":1,"purchaseToken":"t\/1","developerPayload":"caf\u00e9 \ud83d\ude00\n\"q\"\\"}"#
        let payload = #"{"purchaseData":""# + purchaseData.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"") + #"","signature":"\u00632lnbmF0dXJl"}"#
        let upload = try PlayPurchaseUpload(payload: payload)
        #expect(upload.purchaseData == purchaseData)
        #expect(upload.purchase.purchaseToken == "t/1")
        #expect(upload.purchase.developerPayload == "caf\u{e9} \u{1F600}\n\"q\"\\")
        #expect(upload.purchase.packageName == "com.example.app")
        #expect(upload.signature == Data("signature".utf8))
    }

    /// Raw UTF-8 beyond ASCII is read as written, in plain strings and in escaped ones; bytes that
    /// are not UTF-8 are not JSON.
    @Test func textBeyondASCIIIsReadAndBytesThatAreNotUTF8AreRefused() throws {
        let purchaseData = #"{"packageName":"com.example.app","productId":"gems_100","purchaseTime":1,"purchaseToken":"t","developerPayload":"grüße"}"#
        let upload = try PlayPurchaseUpload(
            payload: #"{"purchaseData":""# + purchaseData.replacingOccurrences(of: "\"", with: "\\\"") + #"","signature":"YQ==","ö":"ß"}"#)
        #expect(upload.purchase.developerPayload == "grüße")
        #expect(upload.purchaseData == purchaseData)
        // Inside long strings too, which are read sixteen bytes at a time.
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: 37)
        let cases: [[UInt8]] = [[0xC3, 0x28], [0xFF], [0xE2, 0x82], [0xED, 0xA0, 0x80]]
        for broken in cases + cases.map({ long + $0 + long }) {
            let plain = Array(#"{"purchaseData":"{}","signature":"YQ==","x":""#.utf8) + broken + Array(#""}"#.utf8)
            #expect(throws: PlayUploadFailure.payloadNotJSON, "\(broken)") { try PlayPurchaseUpload(payload: plain) }
            let escaped = Array(#"{"purchaseData":"{}","signature":"YQ==","x":"\n"#.utf8) + broken + Array(#""}"#.utf8)
            #expect(throws: PlayUploadFailure.payloadNotJSON, "\(broken)") { try PlayPurchaseUpload(payload: escaped) }
        }
    }

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
