import Foundation
import GooglePlay
import Testing

@Suite struct DeveloperNotificationTests {
    /// A push body as Pub/Sub sends it, with both spellings of the ids when `both`.
    static func envelope(data: String, id: String = "136969346945", both: Bool = true, snakeOnly: Bool = false) -> [UInt8] {
        var message: [String: Any] = ["data": data, "attributes": ["origin": "play"]]
        if !snakeOnly {
            message["messageId"] = id
            message["publishTime"] = "2026-12-02T16:00:00.123Z"
        }
        if both || snakeOnly {
            message["message_id"] = id
            message["publish_time"] = "2026-12-02T16:00:00.123Z"
        }
        let body: [String: Any] = ["message": message, "subscription": "projects/iap/subscriptions/play-rtdn"]
        return Array(try! JSONSerialization.data(withJSONObject: body))
    }

    static func base64(_ json: String) -> String { Data(json.utf8).base64EncodedString() }

    @Test(arguments: [(true, false), (false, false), (false, true)])
    func eitherSpellingOfTheMessageIdIsRead(both: Bool, snakeOnly: Bool) throws {
        let data = Self.base64(#"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1767225600123","testNotification":{"version":"1.0"}}"#)
        let envelope = try PubSubPushEnvelope(body: Self.envelope(data: data, both: both, snakeOnly: snakeOnly))
        #expect(envelope.messageID == "136969346945")
        #expect(envelope.publishTime == "2026-12-02T16:00:00.123Z")
        #expect(abs((envelope.publishDate?.timeIntervalSince1970 ?? 0) - 1_796_227_200.123) < 0.001)
        #expect(envelope.attributes == ["origin": "play"])
        #expect(envelope.subscription == "projects/iap/subscriptions/play-rtdn")
        let notification = try envelope.notification()
        #expect(notification.kind == .test)
        #expect(notification.eventTimeMillis == 1_767_225_600_123)
        #expect(notification.packageName == "com.example.app")
        #expect(notification.purchaseToken == nil)
    }

    /// White space and line breaks around the base64 (a relay that wrapped the text) are not part
    /// of it; inside it they are not base64.
    @Test(arguments: ["\n", " \t", "\r\n", "\u{A0}", "\u{2028}"])
    func whiteSpaceAroundTheDataIsNotPartOfIt(_ space: String) throws {
        let json = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1767225600123","testNotification":{"version":"1.0"}}"#
        let data = Self.base64(json)
        let padded = try PubSubPushEnvelope(body: Self.envelope(data: space + data + space))
        #expect(padded.decodedData == Data(json.utf8))
        #expect(try padded.notification().kind == .test)
        let split = data.index(data.startIndex, offsetBy: 8)
        let inside = try PubSubPushEnvelope(body: Self.envelope(data: data[..<split] + " " + data[split...]))
        #expect(inside.decodedData == nil)
    }

    @Test func aOneTimeProductNotificationNamesItsToken() throws {
        let data = Self.base64(#"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1767225600123","oneTimeProductNotification":{"version":"1.0","notificationType":1,"purchaseToken":"tok-1","sku":"gems_100"}}"#)
        let notification = try PubSubPushEnvelope(body: Self.envelope(data: data)).notification()
        guard case .oneTimeProduct(let product) = notification.kind else { Issue.record("\(notification.kind)"); return }
        #expect(product.notificationType == DeveloperNotification.OneTimeProduct.purchased)
        #expect(product.sku == "gems_100")
        #expect(notification.purchaseToken == "tok-1")
        #expect(abs((notification.eventTime?.timeIntervalSince1970 ?? 0) - 1_767_225_600.123) < 0.001)
    }

    @Test func aSubscriptionNotificationNamesItsToken() throws {
        let data = Self.base64(#"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1767225600123","subscriptionNotification":{"version":"1.0","notificationType":4,"purchaseToken":"tok-2","subscriptionId":"monthly"}}"#)
        let notification = try PubSubPushEnvelope(body: Self.envelope(data: data)).notification()
        guard case .subscription(let subscription) = notification.kind else { Issue.record("\(notification.kind)"); return }
        #expect(subscription.notificationType == 4)
        #expect(subscription.subscriptionId == "monthly")
        #expect(notification.purchaseToken == "tok-2")
    }

    @Test func aVoidedPurchaseNotificationNamesItsOrder() throws {
        let data = Self.base64(#"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":1767225600123,"voidedPurchaseNotification":{"purchaseToken":"tok-3","orderId":"GPA.1234-5678-9012-34567","productType":2,"refundType":2}}"#)
        let notification = try PubSubPushEnvelope(body: Self.envelope(data: data)).notification()
        guard case .voidedPurchase(let voided) = notification.kind else { Issue.record("\(notification.kind)"); return }
        #expect(voided.purchaseToken == "tok-3")
        #expect(voided.orderId == "GPA.1234-5678-9012-34567")
        #expect(voided.productType == 2 && voided.refundType == 2)
        // A number is read as well as Google's string.
        #expect(notification.eventTimeMillis == 1_767_225_600_123)
    }

    @Test func aNewKindIsUnknownNotAnError() throws {
        let data = Self.base64(#"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1","somethingNew":{}}"#)
        #expect(try PubSubPushEnvelope(body: Self.envelope(data: data)).notification().kind == .unknown)
    }

    @Test(arguments: [
        ("bm90IGpzb24=", DeveloperNotificationError.dataNotJSON),  // "not json"
        (Data([0xff, 0xfe, 0x00]).base64EncodedString(), .dataNotJSON),
        ("***", .dataNotBase64),
        ("", .noData),
    ])
    func garbageDataIsATypedErrorWhileTheMessageIdStaysReadable(data: String, error: DeveloperNotificationError) throws {
        let envelope = try PubSubPushEnvelope(body: Self.envelope(data: data, id: "garbage-1"))
        #expect(envelope.messageID == "garbage-1")
        #expect(throws: error) { try envelope.notification() }
    }

    @Test func aBodyThatIsNoEnvelopeIsRefused() {
        #expect(throws: PubSubEnvelopeError.notAnEnvelope) { try PubSubPushEnvelope(body: Array("hello".utf8)) }
        #expect(throws: PubSubEnvelopeError.noMessage) { try PubSubPushEnvelope(body: Array(#"{"subscription":"s"}"#.utf8)) }
        #expect(throws: PubSubEnvelopeError.noMessageID) {
            try PubSubPushEnvelope(body: Array(#"{"message":{"data":"e30="}}"#.utf8))
        }
    }
}
