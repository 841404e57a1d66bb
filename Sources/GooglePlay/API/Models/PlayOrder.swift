import Foundation

/// An order as `orders.get` answers it (`GET …/orders/{orderId}`,
/// https://developers.google.com/android-publisher/api-ref/rest/v3/orders): the desk's view of a
/// `GPA.` id and the proof that a ledger order id is Google's. Orders calls count against a daily
/// quota (200,000 by default), so the job asks only for ids no other source holds.
public struct PlayOrder: Decodable, Hashable, Sendable {
    /// An amount: `units` (int64, sent as a string) and `nanos` of `currencyCode`.
    public struct Money: Decodable, Hashable, Sendable {
        public var currencyCode: String?
        public var units: Int64?
        public var nanos: Int?

        private enum CodingKeys: String, CodingKey { case currencyCode, units, nanos }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            currencyCode = container.lenientString(.currencyCode)
            units = container.lenientInt64(.units)
            nanos = container.lenientInt(.nanos)
        }

        /// The amount as a decimal.
        public var amount: Decimal {
            Decimal(units ?? 0) + Decimal(nanos ?? 0) / Decimal(1_000_000_000)
        }
    }

    /// One product of the order.
    public struct LineItem: Decodable, Hashable, Sendable {
        public var productId: String?
        public var productTitle: String?
        public var total: Money?
        /// `oneTimePurchaseDetails.quantity`; nil for subscriptions.
        public var quantity: Int?
        /// The line item has `subscriptionDetails`: its purchase token is a subscription's
        /// (`purchases.subscriptionsv2`), not a one-time product's.
        public var isSubscription: Bool

        private enum CodingKeys: String, CodingKey {
            case productId, productTitle, total, oneTimePurchaseDetails, subscriptionDetails
        }
        private enum OneTimeKeys: String, CodingKey { case quantity }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            productId = container.lenientString(.productId)
            productTitle = container.lenientString(.productTitle)
            total = container.lenient(Money.self, .total)
            quantity = (try? container.nestedContainer(keyedBy: OneTimeKeys.self, forKey: .oneTimePurchaseDetails))?
                .lenientInt(.quantity)
            isSubscription = container.contains(.subscriptionDetails)
                && (try? container.decodeNil(forKey: .subscriptionDetails)) == false
        }
    }

    /// A refund of the order, whole or in part.
    public struct Refund: Hashable, Sendable {
        /// RFC 3339.
        public var time: String?
        public var total: Money?
        /// Whether it refunded the whole order (`refundEvent`) or part of it (`partialRefundEvents[]`).
        public var isPartial: Bool
        /// `refundReason` of a full refund; a partial one's `state`.
        public var detail: String?
    }

    public var orderId: String?
    public var purchaseToken: String?
    /// `PENDING`, `PROCESSED`, `CANCELED`, `PENDING_REFUND`, `PARTIALLY_REFUNDED`, `REFUNDED`.
    public var state: String?
    public var lineItems: [LineItem]
    /// RFC 3339.
    public var createTime: String?
    public var lastEventTime: String?
    public var total: Money?
    /// `orderHistory.refundEvent` and `orderHistory.partialRefundEvents[]`, in that order.
    public var refunds: [Refund]
    /// `orderHistory.cancellationEvent.eventTime`.
    public var cancellationTime: String?

    private enum CodingKeys: String, CodingKey {
        case orderId, purchaseToken, state, lineItems, createTime, lastEventTime, total, orderHistory
    }

    private struct History: Decodable {
        struct Event: Decodable {
            var eventTime: String?
        }
        struct RefundDetails: Decodable {
            var total: Money?
        }
        struct FullRefund: Decodable {
            var eventTime: String?
            var refundReason: String?
            var refundDetails: RefundDetails?
        }
        struct PartialRefund: Decodable {
            var createTime: String?
            var processTime: String?
            var state: String?
            var refundDetails: RefundDetails?
        }
        var refundEvent: FullRefund?
        var partialRefundEvents: [PartialRefund]?
        var cancellationEvent: Event?
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        orderId = container.lenientString(.orderId)
        purchaseToken = container.lenientString(.purchaseToken)
        state = container.lenientString(.state)
        lineItems = container.lenient([LineItem].self, .lineItems) ?? []
        createTime = container.lenientString(.createTime)
        lastEventTime = container.lenientString(.lastEventTime)
        total = container.lenient(Money.self, .total)
        let history = container.lenient(History.self, .orderHistory)
        var refunds: [Refund] = []
        if let full = history?.refundEvent {
            refunds.append(
                Refund(time: full.eventTime, total: full.refundDetails?.total, isPartial: false, detail: full.refundReason))
        }
        for partial in history?.partialRefundEvents ?? [] {
            refunds.append(
                Refund(
                    time: partial.processTime ?? partial.createTime, total: partial.refundDetails?.total, isPartial: true,
                    detail: partial.state))
        }
        self.refunds = refunds
        cancellationTime = history?.cancellationEvent?.eventTime
    }

    public var createDate: Date? { GoogleTimestamp.date(createTime) }
    /// Refunded in whole.
    public var isRefunded: Bool { state == "REFUNDED" || refunds.contains { !$0.isPartial } }
}
