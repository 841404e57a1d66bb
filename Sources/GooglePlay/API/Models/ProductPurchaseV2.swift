import Foundation

/// A one-time product purchase as `purchases.productsv2.getproductpurchasev2` answers it
/// (`GET …/purchases/productsv2/tokens/{token}`,
/// https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.productsv2).
/// Unknown fields are ignored; enum values are kept as Google's strings.
public struct ProductPurchaseV2: Decodable, Hashable, Sendable {
    /// One product of the purchase.
    public struct LineItem: Decodable, Hashable, Sendable {
        public var productId: String?
        public var productOfferDetails: OfferDetails?
    }

    /// The quantities and consumption of a line item.
    public struct OfferDetails: Decodable, Hashable, Sendable {
        public var quantity: Int?
        /// The quantity not yet refunded: `quantity − refundableQuantity` were refunded.
        public var refundableQuantity: Int?
        /// `CONSUMPTION_STATE_YET_TO_BE_CONSUMED` or `CONSUMPTION_STATE_CONSUMED`.
        public var consumptionState: String?
        public var offerId: String?
        public var purchaseOptionId: String?

        private enum CodingKeys: String, CodingKey {
            case quantity, refundableQuantity, consumptionState, offerId, purchaseOptionId
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            quantity = container.lenientInt(.quantity)
            refundableQuantity = container.lenientInt(.refundableQuantity)
            consumptionState = container.lenientString(.consumptionState)
            offerId = container.lenientString(.offerId)
            purchaseOptionId = container.lenientString(.purchaseOptionId)
        }
    }

    /// `{"purchaseState": "PURCHASED" | "CANCELLED" | "PENDING"}`.
    public struct PurchaseStateContext: Decodable, Hashable, Sendable {
        public var purchaseState: String?
    }

    public var productLineItem: [LineItem]?
    public var purchaseStateContext: PurchaseStateContext?
    public var orderId: String?
    public var obfuscatedExternalAccountId: String?
    public var obfuscatedExternalProfileId: String?
    public var regionCode: String?
    /// RFC 3339; set once the purchase is paid.
    public var purchaseCompletionTime: String?
    /// `ACKNOWLEDGEMENT_STATE_PENDING` or `ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED`.
    public var acknowledgementState: String?

    private enum CodingKeys: String, CodingKey {
        case productLineItem, purchaseStateContext, testPurchaseContext, orderId, obfuscatedExternalAccountId,
            obfuscatedExternalProfileId, regionCode, purchaseCompletionTime, acknowledgementState
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        productLineItem = container.lenient([LineItem].self, .productLineItem)
        purchaseStateContext = container.lenient(PurchaseStateContext.self, .purchaseStateContext)
        // A test purchase's context may hold anything (`fopType`, …): its presence is what counts.
        isTestPurchase = container.contains(.testPurchaseContext)
            && (try? container.decodeNil(forKey: .testPurchaseContext)) == false
        orderId = container.lenientString(.orderId)
        obfuscatedExternalAccountId = container.lenientString(.obfuscatedExternalAccountId)
        obfuscatedExternalProfileId = container.lenientString(.obfuscatedExternalProfileId)
        regionCode = container.lenientString(.regionCode)
        purchaseCompletionTime = container.lenientString(.purchaseCompletionTime)
        acknowledgementState = container.lenientString(.acknowledgementState)
    }

    /// Whether Google set `testPurchaseContext`: no money moved.
    public private(set) var isTestPurchase: Bool

    /// `purchaseStateContext.purchaseState`.
    public var purchaseState: String? { purchaseStateContext?.purchaseState }
    public var isPurchased: Bool { purchaseState == "PURCHASED" }
    public var isPending: Bool { purchaseState == "PENDING" }
    public var isCancelled: Bool { purchaseState == "CANCELLED" }
    public var isAcknowledged: Bool { acknowledgementState == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" }
    public var completionDate: Date? { GoogleTimestamp.date(purchaseCompletionTime) }

    /// The quantity bought, over every line item (1 when Google gives none).
    public var quantity: Int {
        let quantities = (productLineItem ?? []).compactMap { $0.productOfferDetails?.quantity }
        return quantities.isEmpty ? 1 : quantities.reduce(0, +)
    }

    /// The quantity refunded: `quantity − refundableQuantity`, over every line item that gives both.
    public var refundedQuantity: Int {
        (productLineItem ?? []).reduce(0) { sum, item in
            guard let quantity = item.productOfferDetails?.quantity,
                let refundable = item.productOfferDetails?.refundableQuantity
            else { return sum }
            return sum + max(0, quantity - refundable)
        }
    }
}
