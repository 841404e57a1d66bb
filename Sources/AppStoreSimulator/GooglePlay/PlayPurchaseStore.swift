import Foundation
import Synchronization

/// One purchase the simulated Google Play knows, by its purchase token.
public struct PlaySimulatedPurchase: Sendable, Codable, Hashable {
    /// One-time product (`inapp`) or subscription (`subs`).
    public enum Kind: String, Sendable, Codable, Hashable {
        case oneTime = "one_time"
        case subscription
    }

    public var packageName: String
    public var productId: String
    public var kind: Kind
    public var purchaseToken: String
    /// The first order's id; nil for a licence tester's purchase, which Google gives no order.
    public var orderId: String?
    public var purchaseTimeMillis: Int64
    public var quantity: Int
    /// What has not been refunded (`productOfferDetails.refundableQuantity`).
    public var refundableQuantity: Int
    public var obfuscatedAccountId: String?
    public var obfuscatedProfileId: String?
    /// A licence tester's or test card's purchase (`purchaseType` 0, `testPurchaseContext`).
    public var testPurchase: Bool
    /// Paid later (cash, bank transfer): `purchaseState` 4 in `purchaseData`, `PENDING` from the API.
    public var pending: Bool
    /// A pending purchase that was never paid (`CANCELLED`, `SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED`).
    public var pendingCanceled: Bool
    public var acknowledged: Bool
    public var consumed: Bool
    /// Subscriptions: whether it renews (`autoRenewing`, `autoRenewEnabled`).
    public var autoRenewing: Bool
    /// Subscriptions: when the current period ends.
    public var expiryTimeMillis: Int64?
    /// Subscriptions: renewals so far; renewal `n` (from 0) is order `orderId..n`.
    public var renewals: Int {
        renewalTimesMillis.count
    }
    /// Subscriptions: when each renewal was charged (the period it starts).
    public var renewalTimesMillis: [Int64]
    /// When the purchase was paid (`purchaseCompletionTime`); nil while pending.
    public var completionTimeMillis: Int64?
    /// Voided in full (refunded, charged back, or not acknowledged in time).
    public var voided: Bool
    public var linkedPurchaseToken: String?
    /// One unit's price, micros of ``currency``.
    public var priceMicros: Int64
    public var currency: String
    public var regionCode: String
}

/// One void, as `purchases.voidedpurchases` lists it.
public struct PlayVoidRecord: Sendable, Codable, Hashable {
    public var packageName: String
    public var purchaseToken: String
    /// The voided order: the purchase's, or one renewal's (`GPA.…..3`); nil for a licence tester's.
    public var orderId: String?
    public var purchaseTimeMillis: Int64
    public var voidedTimeMillis: Int64
    /// 0 user, 1 developer, 2 Google.
    public var voidedSource: Int
    /// 0 other, 1 remorse, 2 not received, 3 defective, 4 accidental, 5 fraud, 6 friendly fraud,
    /// 7 chargeback, 8 unacknowledged.
    public var voidedReason: Int
    /// Set for a quantity-based refund.
    public var voidedQuantity: Int?
    /// A quantity-based partial refund (listed only with `includeQuantityBasedPartialRefund=true`).
    public var partial: Bool
    public var kind: PlaySimulatedPurchase.Kind
    /// Increases with every void, across the store: the list's order among voids at one instant.
    public var sequence: Int64
}

/// A Real-time developer notification posted, as the push endpoint received it.
public struct PlayPushRecord: Sendable, Codable, Hashable {
    public var messageId: String
    public var url: String
    /// The body posted (the Pub/Sub push envelope).
    public var body: String
    /// The HTTP status the endpoint answered; nil when it could not be reached.
    public var status: Int?
}

/// Counters served by `GET /sim/play/stats`.
public struct PlaySimulatorStats: Sendable, Codable, Hashable {
    /// Access tokens issued by `POST /token`.
    public var tokensIssued = 0
    /// Assertions refused by `POST /token`.
    public var tokensRefused = 0
    /// Google Play Developer API requests received.
    public var apiRequests = 0
    /// Requests per endpoint: `productsv2`, `subscriptionsv2`, `voidedpurchases`, `orders`,
    /// `products.acknowledge`, `subscriptions.acknowledge`.
    public var requestsByEndpoint: [String: Int] = [:]
    /// Answers by HTTP status (`"200"`, `"401"`, …) or fault.
    public var answers: [String: Int] = [:]
    /// Purchases created.
    public var purchasesCreated = 0
    /// Notifications pushed.
    public var notificationsPushed = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case tokensIssued = "tokens_issued"
        case tokensRefused = "tokens_refused"
        case apiRequests = "api_requests"
        case requestsByEndpoint = "requests_by_endpoint"
        case answers
        case purchasesCreated = "purchases_created"
        case notificationsPushed = "notifications_pushed"
    }
}

/// The simulated Google Play's purchases, voids, access tokens and counters, behind one lock as
/// the App Store side keeps its state.
final class PlayPurchaseStore: Sendable {
    struct Inner {
        var purchases: [String: PlaySimulatedPurchase] = [:]
        /// Order id → purchase token, every order (renewals included).
        var orders: [String: String] = [:]
        var voids: [PlayVoidRecord] = []
        var voidSequence: Int64 = 0
        /// Access token → when it expires.
        var accessTokens: [String: Date] = [:]
        var stats = PlaySimulatorStats()
        var pushes: [PlayPushRecord] = []
        var pushURL: String?
    }

    private let inner = Mutex(Inner())

    init(pushURL: String?) {
        inner.withLock { $0.pushURL = pushURL }
    }

    func withLock<T>(_ body: (inout Inner) throws -> T) rethrows -> T {
        try inner.withLock { try body(&$0) }
    }

    func purchase(_ token: String) -> PlaySimulatedPurchase? { inner.withLock { $0.purchases[token] } }

    var stats: PlaySimulatorStats { inner.withLock { $0.stats } }

    func resetStats() { inner.withLock { $0.stats = PlaySimulatorStats() } }

    func count(_ change: (inout PlaySimulatorStats) -> Void) { inner.withLock { change(&$0.stats) } }
}
