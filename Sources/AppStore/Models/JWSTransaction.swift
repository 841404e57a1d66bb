import Foundation

/// The decoded payload of a StoreKit 2 signed transaction (`JWSTransactionDecodedPayload`).
///
/// Every field is optional, as in Apple's schema: Apple omits fields that do not apply (a
/// consumable has no `expiresDate`) and its test data omits nearly everything.
public struct JWSTransaction: Codable, Hashable, Sendable {
    /// The transaction's unique id.
    public var transactionId: String?
    /// The id of the original purchase; equal to `transactionId` for a first purchase.
    public var originalTransactionId: String?
    /// The subscription purchase event id across devices.
    public var webOrderLineItemId: String?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The product identifier.
    public var productId: String?
    /// The subscription group of an auto-renewable subscription.
    public var subscriptionGroupIdentifier: String?
    /// When the App Store charged (or restored, or renewed).
    public var purchaseDate: Date?
    /// The purchase date of the original transaction.
    public var originalPurchaseDate: Date?
    /// When the subscription period ends.
    public var expiresDate: Date?
    /// Units bought.
    public var quantity: Int?
    /// The product type.
    public var type: ProductType?
    /// The UUID the app set on the purchase to bind it to an account.
    public var appAccountToken: UUID?
    /// Bought by the customer or shared with them.
    public var inAppOwnershipType: OwnershipType?
    /// When Apple signed this JWS; newer data about a transaction wins.
    public var signedDate: Date?
    /// Why Apple refunded or revoked the transaction.
    public var revocationReason: RevocationReason?
    /// When Apple refunded or revoked the transaction.
    public var revocationDate: Date?
    /// How Apple revoked the transaction.
    public var revocationType: RevocationType?
    /// The refunded share in thousandths of a percent, for prorated refunds.
    public var revocationPercentage: Int?
    /// Whether the customer upgraded to another subscription in the group.
    public var isUpgraded: Bool?
    /// The kind of offer applied.
    public var offerType: OfferType?
    /// The offer's identifier (promotional offer id or offer code reference name).
    public var offerIdentifier: String?
    /// The environment the transaction happened in.
    public var environment: AppStoreEnvironment?
    /// The storefront's three-letter country code.
    public var storefront: String?
    /// The storefront's Apple identifier.
    public var storefrontId: String?
    /// A purchase or a renewal.
    public var transactionReason: TransactionReason?
    /// The price in milliunits of `currency` (230000 JPY is ¥230).
    public var price: Int64?
    /// The ISO 4217 currency code of `price`.
    public var currency: String?
    /// The payment mode of the offer.
    public var offerDiscountType: OfferDiscountType?
    /// The app download's unique id (same for every transaction of one customer and app).
    public var appTransactionId: String?
    /// The ISO 8601 duration of the offer.
    public var offerPeriod: String?

    /// An empty payload; set the fields that apply.
    public init() {}
}
