import AppStore
import Foundation

/// A purchase to create in the simulator (`POST /sim/transactions`), in Apple's field names and
/// epoch-millisecond dates, plus the simulator's own `customer` (whose history it joins) and
/// `orderId` (for Look Up Order ID). Everything but `productId` has a default.
public struct SimulatedTransaction: Codable, Hashable, Sendable {
    /// The customer (an App Store account); transactions of one customer form one history.
    public var customer: String?
    /// The id on the invoice email; generated when absent.
    public var orderId: String?
    /// A fixed transaction id; generated when absent.
    public var transactionId: String?
    /// The original purchase's id; the transaction's own id when absent.
    public var originalTransactionId: String?
    /// The app's bundle id (default `com.example.coins`).
    public var bundleId: String?
    /// `Production` (default) or `Sandbox`.
    public var environment: AppStoreEnvironment?
    /// The product bought.
    public var productId: String
    /// The product type (default `Consumable`).
    public var type: ProductType?
    /// Units bought (default 1).
    public var quantity: Int?
    /// When (default now).
    public var purchaseDate: Date?
    /// The original purchase date (default the purchase date).
    public var originalPurchaseDate: Date?
    /// End of a subscription period.
    public var expiresDate: Date?
    /// The app's account token.
    public var appAccountToken: UUID?
    /// Price in milliunits: the total for `quantity`, as Apple's `price` is.
    public var price: Int64?
    /// ISO 4217 currency (default `USD` when a price is given).
    public var currency: String?
    /// Storefront country (default `USA`).
    public var storefront: String?
    /// Created already refunded, at this date.
    public var revocationDate: Date?
    /// Why it was refunded (0 other, 1 app issue).
    public var revocationReason: RevocationReason?
    /// `PURCHASED` (default) or `FAMILY_SHARED`.
    public var inAppOwnershipType: OwnershipType?

    /// Creates a purchase of `productId`; set the other fields that matter.
    public init(
        productId: String, customer: String? = nil, bundleId: String? = nil, environment: AppStoreEnvironment? = nil,
        type: ProductType? = nil, quantity: Int? = nil, purchaseDate: Date? = nil, appAccountToken: UUID? = nil,
        price: Int64? = nil, currency: String? = nil, revocationDate: Date? = nil,
        revocationReason: RevocationReason? = nil
    ) {
        self.productId = productId
        self.customer = customer
        self.bundleId = bundleId
        self.environment = environment
        self.type = type
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.appAccountToken = appAccountToken
        self.price = price
        self.currency = currency
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
    }
}

/// What `POST /sim/transactions` and the refund endpoints answer.
public struct CreatedTransaction: Codable, Hashable, Sendable {
    /// The transaction id.
    public var transactionId: String
    /// The original transaction id.
    public var originalTransactionId: String
    /// The order id (for Look Up Order ID).
    public var orderId: String
    /// The customer whose history holds it.
    public var customer: String
    /// The transaction as a StoreKit 2 JWS, as the app would upload it.
    public var signedTransaction: String
}
