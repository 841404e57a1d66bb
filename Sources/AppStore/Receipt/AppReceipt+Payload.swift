import Foundation

extension AppReceipt {
    /// One `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }` of a receipt payload.
    ///
    /// Attributes Apple does not document (there are many: 8, 10, 14, 1707, 1709…) are kept as
    /// they are, so nothing a receipt says is silently lost and a decoded payload re-encodes to
    /// the same attributes.
    public struct Attribute: Sendable, Hashable {
        /// The attribute type number (e.g. 2 for the bundle id, 1702 for a product id).
        public var type: Int
        /// The attribute version Apple wrote; it carries no meaning for the fields used here.
        public var version: Int
        /// The DER of the value inside the OCTET STRING (e.g. a UTF8String or an INTEGER).
        public var value: [UInt8]

        /// Creates an attribute from its parts.
        public init(type: Int, version: Int = 1, value: [UInt8]) {
            self.type = type
            self.version = version
            self.value = value
        }
    }

    /// The receipt type written in attribute 0 (`Production`, `ProductionSandbox`, `Xcode`, …).
    ///
    /// A struct rather than an enum so that a type Apple adds later is kept as written.
    public struct Environment: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The string exactly as the receipt holds it.
        public var rawValue: String
        /// Creates an environment from the receipt's string.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A receipt for a purchase with real money.
        public static let production = Environment(rawValue: "Production")
        /// A sandbox receipt (TestFlight, App Review, sandbox testers).
        public static let productionSandbox = Environment(rawValue: "ProductionSandbox")
        /// A receipt made by StoreKit testing in Xcode; never real money.
        public static let xcode = Environment(rawValue: "Xcode")

        /// The raw value.
        public var description: String { rawValue }

        /// The App Store environment the receipt is of; nil when it is not Apple's store's.
        public var store: AppStoreEnvironment? { AppStoreEnvironment(receiptEnvironment: rawValue) }
    }

    /// The signed content of an app receipt: its app-level fields and every in-app purchase.
    public struct Payload: Sendable, Hashable {
        /// Attribute 0: the receipt type.
        public var environment: Environment?
        /// Attribute 1: the App Store item id of the app (0 in sandbox).
        public var appItemId: Int64?
        /// Attribute 2: the app's bundle identifier.
        public var bundleId: String?
        /// Attribute 3: the app version (`CFBundleVersion`) the receipt was made for.
        public var appVersion: String?
        /// Attribute 4: the opaque value used in the device hash.
        public var opaqueValue: [UInt8]?
        /// Attribute 5: SHA-1 of device identifier, opaque value and bundle id.
        public var sha1Hash: [UInt8]?
        /// Attribute 12: when the receipt was created; the chain is checked at this time.
        public var creationDate: Date?
        /// Attribute 18: when the app was first purchased.
        public var originalPurchaseDate: Date?
        /// Attribute 19: the version of the app originally purchased.
        public var originalAppVersion: String?
        /// Attribute 21: when the receipt expires (Volume Purchase Program; Xcode writes year 4001).
        public var expirationDate: Date?
        /// Attribute 17, once per purchase, in receipt order (which is not chronological).
        public var inAppPurchases: [InAppPurchase]
        /// Every other attribute, as written.
        public var otherAttributes: [Attribute]

        /// Creates a payload; every field is optional as in real receipts.
        public init(
            environment: Environment? = nil,
            appItemId: Int64? = nil,
            bundleId: String? = nil,
            appVersion: String? = nil,
            opaqueValue: [UInt8]? = nil,
            sha1Hash: [UInt8]? = nil,
            creationDate: Date? = nil,
            originalPurchaseDate: Date? = nil,
            originalAppVersion: String? = nil,
            expirationDate: Date? = nil,
            inAppPurchases: [InAppPurchase] = [],
            otherAttributes: [Attribute] = []
        ) {
            self.environment = environment
            self.appItemId = appItemId
            self.bundleId = bundleId
            self.appVersion = appVersion
            self.opaqueValue = opaqueValue
            self.sha1Hash = sha1Hash
            self.creationDate = creationDate
            self.originalPurchaseDate = originalPurchaseDate
            self.originalAppVersion = originalAppVersion
            self.expirationDate = expirationDate
            self.inAppPurchases = inAppPurchases
            self.otherAttributes = otherAttributes
        }
    }

    /// One in-app purchase (attribute 17) of an app receipt.
    public struct InAppPurchase: Sendable, Hashable {
        /// 1701: number of units bought.
        public var quantity: Int?
        /// 1702: the product identifier.
        public var productId: String?
        /// 1703: the transaction identifier.
        public var transactionId: String?
        /// 1704: when this transaction was charged (or restored).
        public var purchaseDate: Date?
        /// 1705: the transaction a restore or renewal descends from; absent in Xcode receipts.
        public var originalTransactionId: String?
        /// 1706: the purchase date of the original transaction.
        public var originalPurchaseDate: Date?
        /// 1708: when an auto-renewable subscription period ends.
        public var expiresDate: Date?
        /// 1711: the subscription period's web order line item id.
        public var webOrderLineItemId: Int64?
        /// 1712: when Apple customer support cancelled (refunded) the transaction.
        public var cancellationDate: Date?
        /// 1713: whether the period is a free trial (undocumented by Apple, present since 2015).
        public var isTrialPeriod: Bool?
        /// 1719: whether the period is an introductory offer.
        public var isInIntroOfferPeriod: Bool?
        /// 1721: the promotional offer the customer redeemed.
        public var promotionalOfferId: String?
        /// Every other attribute (Apple writes many undocumented ones), as written.
        public var otherAttributes: [Attribute]

        /// Creates an in-app purchase record.
        public init(
            quantity: Int? = nil,
            productId: String? = nil,
            transactionId: String? = nil,
            purchaseDate: Date? = nil,
            originalTransactionId: String? = nil,
            originalPurchaseDate: Date? = nil,
            expiresDate: Date? = nil,
            webOrderLineItemId: Int64? = nil,
            cancellationDate: Date? = nil,
            isTrialPeriod: Bool? = nil,
            isInIntroOfferPeriod: Bool? = nil,
            promotionalOfferId: String? = nil,
            otherAttributes: [Attribute] = []
        ) {
            self.quantity = quantity
            self.productId = productId
            self.transactionId = transactionId
            self.purchaseDate = purchaseDate
            self.originalTransactionId = originalTransactionId
            self.originalPurchaseDate = originalPurchaseDate
            self.expiresDate = expiresDate
            self.webOrderLineItemId = webOrderLineItemId
            self.cancellationDate = cancellationDate
            self.isTrialPeriod = isTrialPeriod
            self.isInIntroOfferPeriod = isInIntroOfferPeriod
            self.promotionalOfferId = promotionalOfferId
            self.otherAttributes = otherAttributes
        }
    }
}

