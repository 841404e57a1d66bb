import Foundation

/// A real-time developer notification, the data of a Pub/Sub message
/// (https://developer.android.com/google/play/billing/rtdn-reference). It says that something
/// changed, never what the state is now: the receiver asks the Developer API.
public struct DeveloperNotification: Hashable, Sendable {
    /// `oneTimeProductNotification`.
    public struct OneTimeProduct: Decodable, Hashable, Sendable {
        public var version: String?
        /// 1 purchased, 2 canceled (a pending purchase abandoned).
        public var notificationType: Int?
        public var purchaseToken: String?
        public var sku: String?

        public static let purchased = 1
        public static let canceled = 2
    }

    /// `subscriptionNotification`: `notificationType` 1 recovered … 13 expired, 20 pending
    /// purchase canceled, 22 price step-up consent updated (kept as Google's integers).
    public struct Subscription: Decodable, Hashable, Sendable {
        public var version: String?
        public var notificationType: Int?
        public var purchaseToken: String?
        public var subscriptionId: String?
    }

    /// `voidedPurchaseNotification`: `productType` 1 subscription, 2 one-time; `refundType` 1 full,
    /// 2 partial by quantity.
    public struct VoidedPurchase: Decodable, Hashable, Sendable {
        public var purchaseToken: String?
        public var orderId: String?
        public var productType: Int?
        public var refundType: Int?
    }

    /// What the notification is about.
    public enum Kind: Hashable, Sendable {
        case oneTimeProduct(OneTimeProduct)
        case subscription(Subscription)
        case voidedPurchase(VoidedPurchase)
        /// Sent from Play Console's "Send test notification".
        case test
        /// None of the kinds above (a kind newer than this code).
        case unknown
    }

    public var version: String?
    public var packageName: String?
    /// `eventTimeMillis`, which Google sends as a string.
    public var eventTimeMillis: Int64?
    public var kind: Kind

    private struct Body: Decodable {
        struct Test: Decodable {
            var version: String?
        }
        var version: String?
        var packageName: String?
        var oneTimeProductNotification: OneTimeProduct?
        var subscriptionNotification: Subscription?
        var voidedPurchaseNotification: VoidedPurchase?
        var testNotification: Test?
    }

    private enum TimeKey: String, CodingKey { case eventTimeMillis }

    private struct Time: Decodable {
        var millis: Int64?
        init(from decoder: any Decoder) throws {
            millis = try decoder.container(keyedBy: TimeKey.self).lenientInt64(.eventTimeMillis)
        }
    }

    /// Reads the decoded data of a Pub/Sub message.
    public init(json: Data) throws(DeveloperNotificationError) {
        let decoder = JSONDecoder()
        guard let body = try? decoder.decode(Body.self, from: json) else { throw .dataNotJSON }
        version = body.version
        packageName = body.packageName
        eventTimeMillis = (try? decoder.decode(Time.self, from: json))?.millis
        kind =
            if let notification = body.oneTimeProductNotification { .oneTimeProduct(notification) }
            else if let notification = body.subscriptionNotification { .subscription(notification) }
            else if let notification = body.voidedPurchaseNotification { .voidedPurchase(notification) }
            else if body.testNotification != nil { .test }
            else { .unknown }
    }

    /// When Google says the event happened.
    public var eventTime: Date? { eventTimeMillis.map { Date(timeIntervalSince1970: Double($0) / 1000) } }

    /// The purchase token the notification names, to ask the API about; nil for a test.
    public var purchaseToken: String? {
        switch kind {
        case .oneTimeProduct(let notification): notification.purchaseToken
        case .subscription(let notification): notification.purchaseToken
        case .voidedPurchase(let notification): notification.purchaseToken
        case .test, .unknown: nil
        }
    }
}

/// A Pub/Sub message's data is not a developer notification: stored raw and counted.
public enum DeveloperNotificationError: Error, Hashable, Sendable, CustomStringConvertible {
    case noData
    case dataNotBase64
    case dataNotJSON

    /// A stable snake_case code.
    public var code: String {
        switch self {
        case .noData: "no_data"
        case .dataNotBase64: "data_not_base64"
        case .dataNotJSON: "data_not_json"
        }
    }

    public var description: String {
        switch self {
        case .noData: "the message has no data"
        case .dataNotBase64: "the message's data is not base64"
        case .dataNotJSON: "the message's data is not a JSON developer notification"
        }
    }
}
