import Foundation

/// The decoded payload of a signed subscription renewal info (`JWSRenewalInfoDecodedPayload`).
public struct JWSRenewalInfo: Codable, Hashable, Sendable {
    /// Why the subscription expired, when it did.
    public var expirationIntent: ExpirationIntent?
    /// The original transaction of the subscription.
    public var originalTransactionId: String?
    /// The product the subscription renews to.
    public var autoRenewProductId: String?
    /// The product of the current period.
    public var productId: String?
    /// Whether automatic renewal is on.
    public var autoRenewStatus: AutoRenewStatus?
    /// Whether Apple is retrying a failed charge.
    public var isInBillingRetryPeriod: Bool?
    /// Whether the customer accepted a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// When the billing grace period ends.
    public var gracePeriodExpiresDate: Date?
    /// The kind of offer for the next period.
    public var offerType: OfferType?
    /// The offer's identifier.
    public var offerIdentifier: String?
    /// When Apple signed this JWS.
    public var signedDate: Date?
    /// The environment.
    public var environment: AppStoreEnvironment?
    /// The start of the current run of continuous subscription.
    public var recentSubscriptionStartDate: Date?
    /// When the subscription next renews.
    public var renewalDate: Date?
    /// The currency of `renewalPrice`.
    public var currency: String?
    /// The next renewal price in milliunits.
    public var renewalPrice: Int64?
    /// The payment mode of the offer for the next period.
    public var offerDiscountType: OfferDiscountType?
    /// Win-back offers the customer may redeem.
    public var eligibleWinBackOfferIds: [String]?
    /// The account-binding UUID of the subscription.
    public var appAccountToken: UUID?
    /// The app download's unique id.
    public var appTransactionId: String?
    /// The ISO 8601 duration of the offer.
    public var offerPeriod: String?

    /// An empty payload; set the fields that apply.
    public init() {}
}
