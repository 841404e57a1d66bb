import Foundation

// An app receipt's contents under the field names verifyReceipt answers with (Apple's "receipt"
// and "in_app" objects), so that what a receipt decodes to reads the same whoever vouches for it:
// `reconcile inspect` shows an untrusted receipt (an Xcode StoreKit receipt, one that failed its
// check) through this one decoding. Dates encode as the encoder's `dateEncodingStrategy` says;
// absent fields are left out. Undocumented attributes are not shown.

extension AppReceipt.Payload: Encodable {
    enum CodingKeys: String, CodingKey {
        case receiptType = "receipt_type"
        case appItemId = "app_item_id"
        case bundleId = "bundle_id"
        case applicationVersion = "application_version"
        case receiptCreationDate = "receipt_creation_date"
        case originalPurchaseDate = "original_purchase_date"
        case originalApplicationVersion = "original_application_version"
        case expirationDate = "expiration_date"
        case inApp = "in_app"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(environment?.rawValue, forKey: .receiptType)
        try container.encodeIfPresent(appItemId, forKey: .appItemId)
        try container.encodeIfPresent(bundleId, forKey: .bundleId)
        try container.encodeIfPresent(appVersion, forKey: .applicationVersion)
        try container.encodeIfPresent(creationDate, forKey: .receiptCreationDate)
        try container.encodeIfPresent(originalPurchaseDate, forKey: .originalPurchaseDate)
        try container.encodeIfPresent(originalAppVersion, forKey: .originalApplicationVersion)
        try container.encodeIfPresent(expirationDate, forKey: .expirationDate)
        try container.encode(inAppPurchases, forKey: .inApp)
    }
}

extension AppReceipt.InAppPurchase: Encodable {
    enum CodingKeys: String, CodingKey {
        case quantity
        case productId = "product_id"
        case transactionId = "transaction_id"
        case purchaseDate = "purchase_date"
        case originalTransactionId = "original_transaction_id"
        case originalPurchaseDate = "original_purchase_date"
        case expiresDate = "expires_date"
        case webOrderLineItemId = "web_order_line_item_id"
        case cancellationDate = "cancellation_date"
        case isTrialPeriod = "is_trial_period"
        case isInIntroOfferPeriod = "is_in_intro_offer_period"
        case promotionalOfferId = "promotional_offer_id"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(quantity, forKey: .quantity)
        try container.encodeIfPresent(productId, forKey: .productId)
        try container.encodeIfPresent(transactionId, forKey: .transactionId)
        try container.encodeIfPresent(purchaseDate, forKey: .purchaseDate)
        try container.encodeIfPresent(originalTransactionId, forKey: .originalTransactionId)
        try container.encodeIfPresent(originalPurchaseDate, forKey: .originalPurchaseDate)
        try container.encodeIfPresent(expiresDate, forKey: .expiresDate)
        try container.encodeIfPresent(webOrderLineItemId, forKey: .webOrderLineItemId)
        try container.encodeIfPresent(cancellationDate, forKey: .cancellationDate)
        try container.encodeIfPresent(isTrialPeriod, forKey: .isTrialPeriod)
        try container.encodeIfPresent(isInIntroOfferPeriod, forKey: .isInIntroOfferPeriod)
        try container.encodeIfPresent(promotionalOfferId, forKey: .promotionalOfferId)
    }
}
