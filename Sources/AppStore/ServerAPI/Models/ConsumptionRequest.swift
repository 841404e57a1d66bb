import Foundation

/// The body of Send Consumption Information V2 (`ConsumptionRequest`), the answer to a
/// `CONSUMPTION_REQUEST`. Apple refuses a body whose `customerConsented` is not true (HTTP 400).
public struct ConsumptionRequest: Codable, Hashable, Sendable {
    /// Whether the customer consented to sharing consumption data; must be true.
    public var customerConsented: Bool
    /// Whether the app delivered the purchase, and if not why.
    public var deliveryStatus: DeliveryStatus
    /// Whether a free sample or trial was offered before the purchase.
    public var sampleContentProvided: Bool
    /// How much of the purchase was used, milliunits (100000 = all); omitted for auto-renewables.
    public var consumptionPercentage: Int?
    /// The app's wish; omitted for no preference.
    public var refundPreference: RefundPreference?

    /// Creates a body.
    public init(
        customerConsented: Bool, deliveryStatus: DeliveryStatus, sampleContentProvided: Bool,
        consumptionPercentage: Int?, refundPreference: RefundPreference?
    ) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }
}

extension ConsumptionRequest {
    /// `deliveryStatus`: whether the app delivered the purchase, and if not why.
    public enum DeliveryStatus: String, Codable, Hashable, Sendable, CaseIterable {
        case delivered = "DELIVERED"
        case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
        case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// `refundPreference`: the refund the app would have Apple grant.
    public enum RefundPreference: String, Codable, Hashable, Sendable, CaseIterable {
        case decline = "DECLINE"
        case grantFull = "GRANT_FULL"
        case grantProrated = "GRANT_PRORATED"
    }
}
