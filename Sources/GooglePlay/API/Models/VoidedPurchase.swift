import Foundation

/// A purchase Google canceled, refunded or charged back, from `purchases.voidedpurchases.list`
/// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases).
/// The times are int64 fields, which Google sends as strings; numbers are read too.
public struct VoidedPurchase: Decodable, Hashable, Sendable {
    /// Who voided it: `voidedSource`.
    public struct Source: RawRepresentable, Hashable, Sendable {
        public var rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let user = Source(rawValue: 0)
        public static let developer = Source(rawValue: 1)
        public static let google = Source(rawValue: 2)
    }

    /// Why: `voidedReason`.
    public struct Reason: RawRepresentable, Hashable, Sendable {
        public var rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let other = Reason(rawValue: 0)
        public static let remorse = Reason(rawValue: 1)
        public static let notReceived = Reason(rawValue: 2)
        public static let defective = Reason(rawValue: 3)
        public static let accidentalPurchase = Reason(rawValue: 4)
        public static let fraud = Reason(rawValue: 5)
        public static let friendlyFraud = Reason(rawValue: 6)
        public static let chargeback = Reason(rawValue: 7)
        /// Not acknowledged within three days: Google refunded it (the app's acknowledge is broken).
        public static let unacknowledgedPurchase = Reason(rawValue: 8)
    }

    public var purchaseToken: String?
    public var purchaseTimeMillis: Int64?
    public var voidedTimeMillis: Int64?
    /// Unique per one-time purchase, subscription purchase and renewal (a token is shared by renewals).
    public var orderId: String?
    public var voidedSource: Source?
    public var voidedReason: Reason?
    /// Set for a quantity-based partial refund (`includeQuantityBasedPartialRefund=true`).
    public var voidedQuantity: Int?

    private enum CodingKeys: String, CodingKey {
        case purchaseToken, purchaseTimeMillis, voidedTimeMillis, orderId, voidedSource, voidedReason, voidedQuantity
    }

    public init(
        purchaseToken: String?, purchaseTimeMillis: Int64?, voidedTimeMillis: Int64?, orderId: String?,
        voidedSource: Source?, voidedReason: Reason?, voidedQuantity: Int?
    ) {
        self.purchaseToken = purchaseToken
        self.purchaseTimeMillis = purchaseTimeMillis
        self.voidedTimeMillis = voidedTimeMillis
        self.orderId = orderId
        self.voidedSource = voidedSource
        self.voidedReason = voidedReason
        self.voidedQuantity = voidedQuantity
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        purchaseToken = container.lenientString(.purchaseToken)
        purchaseTimeMillis = container.lenientInt64(.purchaseTimeMillis)
        voidedTimeMillis = container.lenientInt64(.voidedTimeMillis)
        orderId = container.lenientString(.orderId)
        voidedSource = container.lenientInt(.voidedSource).map(Source.init(rawValue:))
        voidedReason = container.lenientInt(.voidedReason).map(Reason.init(rawValue:))
        voidedQuantity = container.lenientInt(.voidedQuantity)
    }

    public var purchaseTime: Date? { purchaseTimeMillis.map { Date(timeIntervalSince1970: Double($0) / 1000) } }
    public var voidedTime: Date? { voidedTimeMillis.map { Date(timeIntervalSince1970: Double($0) / 1000) } }
}
