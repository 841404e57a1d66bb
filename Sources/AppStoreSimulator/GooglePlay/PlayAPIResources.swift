import Foundation

/// The Google Play Developer API's resources as the simulator writes them, field names and enum
/// values as developers.google.com/android-publisher/api-ref/rest/v3 documents them: camelCase,
/// int64 as strings, timestamps RFC 3339 with milliseconds ("Z-normalized"), empty and unset
/// fields left out as Google's proto3 JSON leaves them out.
enum PlayAPIResources {
    /// `purchases.productsv2` (`ProductPurchaseV2`).
    struct ProductPurchaseV2: Encodable {
        var kind = "androidpublisher#productPurchaseV2"
        var productLineItem: [ProductLineItem]
        var purchaseStateContext: PurchaseStateContext
        var testPurchaseContext: TestPurchaseContext?
        var orderId: String?
        var obfuscatedExternalAccountId: String?
        var obfuscatedExternalProfileId: String?
        var regionCode: String
        var purchaseCompletionTime: String?
        var acknowledgementState: String

        struct ProductLineItem: Encodable {
            var productId: String
            var productOfferDetails: ProductOfferDetails
        }

        struct ProductOfferDetails: Encodable {
            var quantity: Int
            var refundableQuantity: Int
            var consumptionState: String
        }

        struct PurchaseStateContext: Encodable {
            /// `PURCHASED`, `CANCELLED` or `PENDING`.
            var purchaseState: String
        }

        struct TestPurchaseContext: Encodable {
            /// `TEST`: a licence tester's test card.
            var fopType = "TEST"
        }
    }

    /// `purchases.subscriptionsv2` (`SubscriptionPurchaseV2`).
    struct SubscriptionPurchaseV2: Encodable {
        var kind = "androidpublisher#subscriptionPurchaseV2"
        var regionCode: String
        var lineItems: [LineItem]
        var startTime: String?
        var subscriptionState: String
        /// Deprecated by Google for `lineItems[].latestSuccessfulOrderId`, still answered.
        var latestOrderId: String?
        var linkedPurchaseToken: String?
        var canceledStateContext: CanceledStateContext?
        var testPurchase: TestPurchase?
        var acknowledgementState: String
        var externalAccountIdentifiers: ExternalAccountIdentifiers?

        struct LineItem: Encodable {
            var productId: String
            var expiryTime: String?
            var autoRenewingPlan: AutoRenewingPlan
            var offerDetails: OfferDetails
            var latestSuccessfulOrderId: String?
        }

        struct AutoRenewingPlan: Encodable {
            var autoRenewEnabled: Bool
        }

        struct OfferDetails: Encodable {
            var basePlanId: String
        }

        /// One of Google's cancellation reasons; the simulator knows the user's and the developer's.
        struct CanceledStateContext: Encodable {
            var userInitiatedCancellation: UserInitiatedCancellation?
            var systemInitiatedCancellation: Empty?
        }

        struct UserInitiatedCancellation: Encodable {
            var cancelTime: String?
        }

        struct Empty: Encodable {}

        /// An empty object: its presence is the whole of the signal.
        struct TestPurchase: Encodable {}

        struct ExternalAccountIdentifiers: Encodable {
            var obfuscatedExternalAccountId: String?
            var obfuscatedExternalProfileId: String?
        }
    }

    /// `purchases.voidedpurchases.list`'s answer.
    struct VoidedPurchasesListResponse: Encodable {
        var pageInfo: PageInfo?
        var tokenPagination: TokenPagination?
        var voidedPurchases: [VoidedPurchase]?

        struct PageInfo: Encodable {
            var totalResults: Int
            var resultPerPage: Int
            var startIndex: Int
        }

        struct TokenPagination: Encodable {
            var nextPageToken: String
        }

        struct VoidedPurchase: Encodable {
            var kind = "androidpublisher#voidedPurchase"
            var purchaseToken: String
            var purchaseTimeMillis: String
            var voidedTimeMillis: String
            var orderId: String?
            var voidedSource: Int
            var voidedReason: Int
            var voidedQuantity: Int?
        }
    }

    /// `orders.get` (`Order`).
    struct Order: Encodable {
        var lineItems: [LineItem]
        var orderId: String
        var purchaseToken: String
        /// `PENDING`, `PROCESSED`, `CANCELED`, `PENDING_REFUND`, `PARTIALLY_REFUNDED`, `REFUNDED`.
        var state: String
        var createTime: String
        var lastEventTime: String
        var buyerAddress: BuyerAddress
        var total: Money
        var tax: Money
        var orderDetails: OrderDetails
        var orderHistory: OrderHistory

        struct LineItem: Encodable {
            var productId: String
            var productTitle: String
            var total: Money
            var tax: Money
            var listingPrice: Money
            var oneTimePurchaseDetails: OneTimePurchaseDetails?
            var subscriptionDetails: SubscriptionDetails?
        }

        struct OneTimePurchaseDetails: Encodable {
            var quantity: Int
        }

        struct SubscriptionDetails: Encodable {
            var basePlanId: String
            var servicePeriodStartTime: String?
            var servicePeriodEndTime: String?
        }

        struct BuyerAddress: Encodable {
            var buyerCountry: String
        }

        struct OrderDetails: Encodable {
            var taxInclusive: Bool
        }

        struct OrderHistory: Encodable {
            var processedEvent: Event?
            var cancellationEvent: Event?
            var refundEvent: RefundEvent?
            var partialRefundEvents: [PartialRefundEvent]?
        }

        struct Event: Encodable {
            var eventTime: String
        }

        struct RefundEvent: Encodable {
            var eventTime: String
            /// `OTHER` or `CHARGEBACK`.
            var refundReason: String
            var refundDetails: RefundDetails
        }

        struct PartialRefundEvent: Encodable {
            var createTime: String
            var processTime: String
            /// `PENDING` or `PROCESSED_SUCCESSFULLY`.
            var state: String
            var refundDetails: RefundDetails
        }

        struct RefundDetails: Encodable {
            var total: Money
            var tax: Money
        }
    }

    /// `google.type.Money`: `units` an int64 string, `nanos` billionths.
    struct Money: Encodable {
        var currencyCode: String
        var units: String
        var nanos: Int

        init(micros: Int64, currency: String) {
            currencyCode = currency
            units = String(micros / 1_000_000)
            nanos = Int(micros % 1_000_000) * 1000
        }
    }

    /// RFC 3339, UTC, milliseconds.
    static func timestamp(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(millisecondsSince1970: milliseconds))
    }
}
