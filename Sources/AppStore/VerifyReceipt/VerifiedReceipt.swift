import Foundation

/// What verifyReceipt confirmed about one app receipt (status `0`, or `21006` for an iOS 6 style
/// receipt of an expired subscription): the app, and every transaction Apple listed.
public struct VerifiedReceipt: Sendable, Hashable {
    /// The App Store environment a receipt belongs to (``AppStoreEnvironment``: verifyReceipt's
    /// `Production` or `Sandbox`, or a value Apple adds later, kept as sent).
    public typealias Environment = AppStoreEnvironment

    /// Apple's `status`: `0`, or `21006` (valid, but an expired iOS 6 style subscription).
    public var status: Int
    /// `environment`, or for responses without it (iOS 6 style) the endpoint that answered.
    public var environment: Environment
    /// `receipt.bundle_id` (`bid` in iOS 6 style responses).
    public var bundleID: String
    /// `receipt.application_version` (`bvrs` in iOS 6 style responses).
    public var applicationVersion: String?
    /// `receipt.original_application_version`.
    public var originalApplicationVersion: String?
    /// `receipt.receipt_type`: `Production`, `ProductionSandbox`, ...
    public var receiptType: String?
    /// `receipt.app_item_id` (`item_id` in iOS 6 style responses); `0` in the sandbox.
    public var appItemID: String?
    /// `receipt.receipt_creation_date_ms`.
    public var receiptCreationDate: Date?
    /// `receipt.request_date_ms`: when Apple answered.
    public var requestDate: Date?
    /// `receipt.original_purchase_date_ms`: when the app was first obtained.
    public var originalPurchaseDate: Date?
    /// `receipt.in_app`, in Apple's (unspecified) order. For an iOS 6 style receipt: its one
    /// transaction.
    public var inApp: [Transaction]
    /// `latest_receipt_info`: the newest state of each transaction; finished consumables absent.
    public var latestReceiptInfo: [Transaction]
    /// `pending_renewal_info`, present for auto-renewable subscriptions.
    public var pendingRenewalInfo: [PendingRenewal]
    /// `latest_receipt`: a fresher base64 receipt, for subscriptions.
    public var latestReceipt: String?
    /// True for the iOS 6 style response: `bid`/`bvrs` and a single transaction in `receipt`.
    public var isLegacyFormat: Bool

    /// Creates a value; decoding a response is ``VerifyReceiptResponse/decode(_:answeredBy:)``.
    public init(
        status: Int = 0, environment: Environment, bundleID: String, applicationVersion: String? = nil,
        originalApplicationVersion: String? = nil, receiptType: String? = nil, appItemID: String? = nil,
        receiptCreationDate: Date? = nil, requestDate: Date? = nil, originalPurchaseDate: Date? = nil,
        inApp: [Transaction] = [], latestReceiptInfo: [Transaction] = [], pendingRenewalInfo: [PendingRenewal] = [],
        latestReceipt: String? = nil, isLegacyFormat: Bool = false
    ) {
        self.status = status
        self.environment = environment
        self.bundleID = bundleID
        self.applicationVersion = applicationVersion
        self.originalApplicationVersion = originalApplicationVersion
        self.receiptType = receiptType
        self.appItemID = appItemID
        self.receiptCreationDate = receiptCreationDate
        self.requestDate = requestDate
        self.originalPurchaseDate = originalPurchaseDate
        self.inApp = inApp
        self.latestReceiptInfo = latestReceiptInfo
        self.pendingRenewalInfo = pendingRenewalInfo
        self.latestReceipt = latestReceipt
        self.isLegacyFormat = isLegacyFormat
    }

    /// Every distinct transaction of `in_app` and `latest_receipt_info`, one per `transaction_id`.
    /// The `latest_receipt_info` entry wins: it carries the newest state (ownership, upgrade,
    /// cancellation). Neither list alone is complete: finished consumables leave
    /// `latest_receipt_info`, and `in_app` lags behind renewals.
    public var transactions: [Transaction] {
        var seen: [String: Int] = [:]
        var merged: [Transaction] = []
        for transaction in latestReceiptInfo + inApp where seen[transaction.transactionID] == nil {
            seen[transaction.transactionID] = merged.count
            merged.append(transaction)
        }
        return merged
    }
}

extension VerifiedReceipt {
    /// One entry of `in_app` or `latest_receipt_info`, with Apple's string-typed numbers parsed.
    public struct Transaction: Sendable, Hashable, Codable {
        /// `transaction_id`.
        public var transactionID: String
        /// `original_transaction_id`: equal to `transactionID` for a first purchase; shared by
        /// restores and renewals.
        public var originalTransactionID: String?
        /// `product_id`.
        public var productID: String
        /// `quantity` (1–10); 1 when Apple left it out.
        public var quantity: Int
        /// `purchase_date_ms`.
        public var purchaseDate: Date
        /// `original_purchase_date_ms`.
        public var originalPurchaseDate: Date?
        /// `expires_date_ms` (subscriptions). iOS 6 style responses name it `expires_date` and
        /// write milliseconds there.
        public var expiresDate: Date?
        /// `cancellation_date_ms`: set when Apple refunded or revoked the transaction.
        public var cancellationDate: Date?
        /// `cancellation_reason`: `1` an issue in the app, `0` another reason; kept as sent.
        public var cancellationReason: String?
        /// `web_order_line_item_id` (subscriptions).
        public var webOrderLineItemID: String?
        /// `is_trial_period`.
        public var isTrialPeriod: Bool?
        /// `is_in_intro_offer_period`.
        public var isInIntroOfferPeriod: Bool?
        /// `is_upgraded` (on `latest_receipt_info`).
        public var isUpgraded: Bool?
        /// `promotional_offer_id`.
        public var promotionalOfferID: String?
        /// `offer_code_ref_name`.
        public var offerCodeRefName: String?
        /// `subscription_group_identifier`.
        public var subscriptionGroupIdentifier: String?
        /// `in_app_ownership_type`: `PURCHASED`, `FAMILY_SHARED`; kept as sent.
        public var inAppOwnershipType: String?
        /// `app_account_token` (StoreKit 2 purchases appear in receipts too).
        public var appAccountToken: String?

        /// Creates a transaction.
        public init(
            transactionID: String, originalTransactionID: String? = nil, productID: String, quantity: Int = 1,
            purchaseDate: Date, originalPurchaseDate: Date? = nil, expiresDate: Date? = nil,
            cancellationDate: Date? = nil, cancellationReason: String? = nil, webOrderLineItemID: String? = nil,
            isTrialPeriod: Bool? = nil, isInIntroOfferPeriod: Bool? = nil, isUpgraded: Bool? = nil,
            promotionalOfferID: String? = nil, offerCodeRefName: String? = nil,
            subscriptionGroupIdentifier: String? = nil, inAppOwnershipType: String? = nil,
            appAccountToken: String? = nil
        ) {
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.productID = productID
            self.quantity = quantity
            self.purchaseDate = purchaseDate
            self.originalPurchaseDate = originalPurchaseDate
            self.expiresDate = expiresDate
            self.cancellationDate = cancellationDate
            self.cancellationReason = cancellationReason
            self.webOrderLineItemID = webOrderLineItemID
            self.isTrialPeriod = isTrialPeriod
            self.isInIntroOfferPeriod = isInIntroOfferPeriod
            self.isUpgraded = isUpgraded
            self.promotionalOfferID = promotionalOfferID
            self.offerCodeRefName = offerCodeRefName
            self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
            self.inAppOwnershipType = inAppOwnershipType
            self.appAccountToken = appAccountToken
        }

        /// Writes the item with Apple's field names and Apple's string typing.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: AppleCodingKey.self)
            func flag(_ value: Bool?) -> String? { value.map { $0 ? "true" : "false" } }
            try c.put(String(quantity), "quantity")
            try c.put(productID, "product_id")
            try c.put(transactionID, "transaction_id")
            try c.put(originalTransactionID, "original_transaction_id")
            try c.putDate(purchaseDate, "purchase_date")
            try c.putDate(originalPurchaseDate, "original_purchase_date")
            try c.putDate(expiresDate, "expires_date")
            try c.putDate(cancellationDate, "cancellation_date")
            try c.put(cancellationReason, "cancellation_reason")
            try c.put(webOrderLineItemID, "web_order_line_item_id")
            try c.put(flag(isTrialPeriod), "is_trial_period")
            try c.put(flag(isInIntroOfferPeriod), "is_in_intro_offer_period")
            try c.put(flag(isUpgraded), "is_upgraded")
            try c.put(promotionalOfferID, "promotional_offer_id")
            try c.put(offerCodeRefName, "offer_code_ref_name")
            try c.put(subscriptionGroupIdentifier, "subscription_group_identifier")
            try c.put(inAppOwnershipType, "in_app_ownership_type")
            try c.put(appAccountToken, "app_account_token")
        }
    }

    /// One entry of `pending_renewal_info`: what an auto-renewable subscription will do next.
    public struct PendingRenewal: Sendable, Hashable, Codable {
        /// `auto_renew_product_id`.
        public var autoRenewProductID: String?
        /// `product_id`.
        public var productID: String?
        /// `original_transaction_id`.
        public var originalTransactionID: String?
        /// `auto_renew_status`: true when the subscription will renew.
        public var autoRenewStatus: Bool?
        /// `expiration_intent`, kept as sent (`1` cancelled, `2` billing error, ...).
        public var expirationIntent: String?
        /// `is_in_billing_retry_period`.
        public var isInBillingRetryPeriod: Bool?

        /// Creates a value.
        public init(
            autoRenewProductID: String? = nil, productID: String? = nil, originalTransactionID: String? = nil,
            autoRenewStatus: Bool? = nil, expirationIntent: String? = nil, isInBillingRetryPeriod: Bool? = nil
        ) {
            self.autoRenewProductID = autoRenewProductID
            self.productID = productID
            self.originalTransactionID = originalTransactionID
            self.autoRenewStatus = autoRenewStatus
            self.expirationIntent = expirationIntent
            self.isInBillingRetryPeriod = isInBillingRetryPeriod
        }

        /// Writes Apple's field names, numbers as strings.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: AppleCodingKey.self)
            try c.put(autoRenewProductID, "auto_renew_product_id")
            try c.put(productID, "product_id")
            try c.put(originalTransactionID, "original_transaction_id")
            try c.put(autoRenewStatus.map { $0 ? "1" : "0" }, "auto_renew_status")
            try c.put(expirationIntent, "expiration_intent")
            try c.put(isInBillingRetryPeriod.map { $0 ? "1" : "0" }, "is_in_billing_retry_period")
        }
    }
}

extension VerifiedReceipt.Transaction: AppleJSONDecodable {
    enum Field: String, AppleFieldName {
        case transactionID = "transaction_id", productID = "product_id", purchaseDate = "purchase_date_ms"
        case originalTransactionID = "original_transaction_id", quantity
        case originalPurchaseDate = "original_purchase_date_ms", expiresDate = "expires_date_ms"
        case legacyExpiresDate = "expires_date", cancellationDate = "cancellation_date_ms"
        case cancellationReason = "cancellation_reason", webOrderLineItemID = "web_order_line_item_id"
        case isTrialPeriod = "is_trial_period", isInIntroOfferPeriod = "is_in_intro_offer_period"
        case isUpgraded = "is_upgraded", promotionalOfferID = "promotional_offer_id"
        case offerCodeRefName = "offer_code_ref_name", subscriptionGroupIdentifier = "subscription_group_identifier"
        case inAppOwnershipType = "in_app_ownership_type", appAccountToken = "app_account_token"

        static let keys = DirectJSON.Keys(Self.self)
    }

    init(fields c: some AppleJSONObject<Field>) throws {
        guard let transactionID = try c.lenientString(.transactionID), !transactionID.isEmpty else {
            throw c.missing(.transactionID, "no transaction_id")
        }
        guard let productID = try c.lenientString(.productID) else { throw c.missing(.productID, "no product_id") }
        guard let purchaseDate = try c.lenientMillisecondsDate(.purchaseDate) else {
            throw c.missing(.purchaseDate, "no purchase_date_ms")
        }
        self.transactionID = transactionID
        self.productID = productID
        self.purchaseDate = purchaseDate
        originalTransactionID = try c.lenientString(.originalTransactionID)
        quantity = Int(try c.lenientInt64(.quantity) ?? 1)
        originalPurchaseDate = try c.lenientMillisecondsDate(.originalPurchaseDate)
        // iOS 6 style responses put milliseconds in `expires_date` and have no `_ms` field.
        expiresDate =
            try c.lenientMillisecondsDate(.expiresDate)
            ?? (try? c.lenientMillisecondsDate(.legacyExpiresDate)) ?? nil
        cancellationDate = try c.lenientMillisecondsDate(.cancellationDate)
        cancellationReason = try c.lenientString(.cancellationReason)
        webOrderLineItemID = try c.lenientString(.webOrderLineItemID)
        isTrialPeriod = try c.lenientBool(.isTrialPeriod)
        isInIntroOfferPeriod = try c.lenientBool(.isInIntroOfferPeriod)
        isUpgraded = try c.lenientBool(.isUpgraded)
        promotionalOfferID = try c.lenientString(.promotionalOfferID)
        offerCodeRefName = try c.lenientString(.offerCodeRefName)
        subscriptionGroupIdentifier = try c.lenientString(.subscriptionGroupIdentifier)
        inAppOwnershipType = try c.lenientString(.inAppOwnershipType)
        appAccountToken = try c.lenientString(.appAccountToken)
    }
}

extension VerifiedReceipt.PendingRenewal: AppleJSONDecodable {
    enum Field: String, AppleFieldName {
        case autoRenewProductID = "auto_renew_product_id", productID = "product_id"
        case originalTransactionID = "original_transaction_id", autoRenewStatus = "auto_renew_status"
        case expirationIntent = "expiration_intent", isInBillingRetryPeriod = "is_in_billing_retry_period"

        static let keys = DirectJSON.Keys(Self.self)
    }

    init(fields c: some AppleJSONObject<Field>) throws {
        autoRenewProductID = try c.lenientString(.autoRenewProductID)
        productID = try c.lenientString(.productID)
        originalTransactionID = try c.lenientString(.originalTransactionID)
        autoRenewStatus = try c.lenientBool(.autoRenewStatus)
        expirationIntent = try c.lenientString(.expirationIntent)
        isInBillingRetryPeriod = try c.lenientBool(.isInBillingRetryPeriod)
    }
}
