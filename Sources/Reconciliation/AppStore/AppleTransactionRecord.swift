import AppStore
import Foundation

/// One store-confirmed transaction, normalised for `reconcile.apple_transactions` (the white table
/// of every store: its name is SPEC section 2's). Apple's sources make them in
/// AppleTransactionRecord+Apple.swift, Google Play's in `GooglePlay/PlayTransactionRecord.swift`.
public struct AppleTransactionRecord: Sendable, Equatable, Codable {
    /// Which store confirmed it.
    public var store: Store = .appStore
    public var transactionID: String
    public var originalTransactionID: String
    public var productID: String
    /// `consumable`, `non_consumable`, `auto_renewable`, `non_renewing`, or nil when unknown.
    public var productType: String?
    public var bundleID: String
    /// `Production` or `Sandbox`, as Apple spells it.
    public var environment: AppStoreEnvironment
    public var quantity: Int
    public var purchaseDate: Date
    public var originalPurchaseDate: Date?
    public var expiresDate: Date?
    public var revocationDate: Date?
    public var revocationReason: Int?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var ownershipType: String?
    public var appAccountToken: UUID?
    public var webOrderLineItemID: String?
    public var priceMilli: Int64?
    public var currency: String?
    public var storefront: String?
    /// `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE` (StoreKit 2 sources only).
    public var revocationType: String?
    /// The refunded share of the whole quantity in milliunits (100000 = all), for `REFUND_PRORATED`.
    public var revocationPercentage: Int?
    /// Apple's id of the app download: one per customer (Apple ID) and app.
    public var appTransactionID: String?
    /// Apple's `signedDate`, or the receipt's creation time: newer data wins.
    public var signedDate: Date?
    /// Which source told it.
    public var source: TransactionSource
    /// Play: the purchase's signed account binding (`obfuscatedAccountId`).
    public var obfuscatedAccountID: String?
    /// Play: the purchase token the order belongs to.
    public var purchaseToken: String?
    /// Play: the units a partial refund took back (nil: all of them when revoked, none otherwise).
    public var refundedQuantity: Int?
    /// Play: whether Google says the purchase is acknowledged (nil when the source does not say).
    public var acknowledged: Bool?
    /// Play: a pending purchase, not paid yet, never judged until it is.
    public var pending = false

    /// Creates a record.
    public init(
        transactionID: String, originalTransactionID: String, productID: String, productType: String? = nil,
        bundleID: String, environment: AppStoreEnvironment, quantity: Int = 1, purchaseDate: Date, originalPurchaseDate: Date? = nil,
        expiresDate: Date? = nil, revocationDate: Date? = nil, revocationReason: Int? = nil,
        ownershipType: String? = nil, appAccountToken: UUID? = nil, webOrderLineItemID: String? = nil,
        priceMilli: Int64? = nil, currency: String? = nil, storefront: String? = nil, revocationType: String? = nil,
        revocationPercentage: Int? = nil, appTransactionID: String? = nil, signedDate: Date? = nil, source: TransactionSource
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.productType = productType
        self.bundleID = bundleID
        self.environment = environment
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.ownershipType = ownershipType
        self.appAccountToken = appAccountToken
        self.webOrderLineItemID = webOrderLineItemID
        self.priceMilli = priceMilli
        self.currency = currency
        self.storefront = storefront
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.appTransactionID = appTransactionID
        self.signedDate = signedDate
        self.source = source
    }
}

extension AppleTransactionRecord {
    /// The first text field holding a NUL character (U+0000), by its column name, or nil.
    /// PostgreSQL text cannot store NUL: such a record can only be refused, never stored.
    public var fieldHoldingNUL: String? {
        let fields: [(String, String?)] = [
            ("transaction_id", transactionID), ("original_transaction_id", originalTransactionID),
            ("product_id", productID), ("product_type", productType), ("bundle_id", bundleID),
            ("environment", environment.rawValue), ("ownership_type", ownershipType),
            ("web_order_line_item_id", webOrderLineItemID), ("currency", currency), ("storefront", storefront),
            ("revocation_type", revocationType), ("app_transaction_id", appTransactionID), ("source", source.rawValue),
            ("obfuscated_account_id", obfuscatedAccountID), ("purchase_token", purchaseToken),
        ]
        return fields.first { $0.1?.utf8.contains(0) == true }?.0
    }
}

extension String {
    /// The text with each NUL character written as `\u0000`, so that it can be stored and read.
    var escapingNUL: String {
        guard utf8.contains(0) else { return self }
        var escaped = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if scalar.value == 0 {
                escaped.append(contentsOf: "\\u0000".unicodeScalars)
            } else {
                escaped.append(scalar)
            }
        }
        return String(escaped)
    }
}
