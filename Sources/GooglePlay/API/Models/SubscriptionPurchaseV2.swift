import Foundation

/// A subscription as `purchases.subscriptionsv2.get` answers it
/// (`GET …/purchases/subscriptionsv2/tokens/{token}`,
/// https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2).
/// Renewals share the purchase token; each has its own order id (`…..0`, `…..1`).
public struct SubscriptionPurchaseV2: Decodable, Hashable, Sendable {
    /// One base plan or offer of the subscription.
    public struct LineItem: Decodable, Hashable, Sendable {
        public var productId: String?
        /// RFC 3339: when the current period ends.
        public var expiryTime: String?
        /// The order id of the latest successful charge (the renewal's own `..N` id).
        public var latestSuccessfulOrderId: String?
        /// `autoRenewingPlan.autoRenewEnabled`.
        public var autoRenewEnabled: Bool?

        private enum CodingKeys: String, CodingKey {
            case productId, expiryTime, latestSuccessfulOrderId, autoRenewingPlan
        }

        private struct AutoRenewingPlan: Decodable {
            var autoRenewEnabled: Bool?
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            productId = container.lenientString(.productId)
            expiryTime = container.lenientString(.expiryTime)
            latestSuccessfulOrderId = container.lenientString(.latestSuccessfulOrderId)
            autoRenewEnabled = container.lenient(AutoRenewingPlan.self, .autoRenewingPlan)?.autoRenewEnabled
        }

        public var expiryDate: Date? { GoogleTimestamp.date(expiryTime) }
    }

    /// `externalAccountIdentifiers`: the ids the app set at purchase.
    public struct ExternalAccountIdentifiers: Decodable, Hashable, Sendable {
        public var obfuscatedExternalAccountId: String?
        public var obfuscatedExternalProfileId: String?
    }

    public var lineItems: [LineItem]?
    /// RFC 3339; absent while the first payment is pending.
    public var startTime: String?
    /// `SUBSCRIPTION_STATE_ACTIVE`, `…_CANCELED`, `…_IN_GRACE_PERIOD`, `…_ON_HOLD`, `…_PAUSED`,
    /// `…_EXPIRED`, `…_PENDING`, `…_PENDING_PURCHASE_CANCELED`.
    public var subscriptionState: String?
    /// Deprecated by Google in favour of `lineItems[].latestSuccessfulOrderId`; read when those are absent.
    public var latestOrderId: String?
    /// The purchase token this one replaced (upgrade, downgrade, re-signup).
    public var linkedPurchaseToken: String?
    /// `ACKNOWLEDGEMENT_STATE_PENDING` or `ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED`.
    public var acknowledgementState: String?
    public var externalAccountIdentifiers: ExternalAccountIdentifiers?
    public var regionCode: String?
    /// Whether Google set `testPurchase` (a licence tester's subscription).
    public private(set) var isTestPurchase: Bool

    private enum CodingKeys: String, CodingKey {
        case lineItems, startTime, subscriptionState, latestOrderId, linkedPurchaseToken, acknowledgementState,
            externalAccountIdentifiers, regionCode, testPurchase
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lineItems = container.lenient([LineItem].self, .lineItems)
        startTime = container.lenientString(.startTime)
        subscriptionState = container.lenientString(.subscriptionState)
        latestOrderId = container.lenientString(.latestOrderId)
        linkedPurchaseToken = container.lenientString(.linkedPurchaseToken)
        acknowledgementState = container.lenientString(.acknowledgementState)
        externalAccountIdentifiers = container.lenient(ExternalAccountIdentifiers.self, .externalAccountIdentifiers)
        regionCode = container.lenientString(.regionCode)
        isTestPurchase = container.contains(.testPurchase) && (try? container.decodeNil(forKey: .testPurchase)) == false
    }

    public var isAcknowledged: Bool { acknowledgementState == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" }
    public var startDate: Date? { GoogleTimestamp.date(startTime) }
    public var obfuscatedExternalAccountId: String? { externalAccountIdentifiers?.obfuscatedExternalAccountId }
    /// The latest charge's order id: the line items', else the deprecated top-level one.
    public var latestSuccessfulOrderId: String? {
        lineItems?.lazy.compactMap(\.latestSuccessfulOrderId).first ?? latestOrderId
    }
}
