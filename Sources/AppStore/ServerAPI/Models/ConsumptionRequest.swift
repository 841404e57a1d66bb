import Foundation

/// The body of Send Consumption Information V2 (`ConsumptionRequest`), the answer to a
/// `CONSUMPTION_REQUEST`. Apple refuses a body whose `customerConsented` is not true (HTTP 400).
public struct ConsumptionRequest: Codable, Hashable, Sendable {
    /// Whether the customer consented to sharing consumption data; must be true.
    public var customerConsented: Bool
    /// `DELIVERED`, `UNDELIVERED_QUALITY_ISSUE`, `UNDELIVERED_WRONG_ITEM`, `UNDELIVERED_SERVER_OUTAGE`,
    /// `UNDELIVERED_OTHER`.
    public var deliveryStatus: String
    /// Whether a free sample or trial was offered before the purchase.
    public var sampleContentProvided: Bool
    /// How much of the purchase was used, milliunits (100000 = all); omitted for auto-renewables.
    public var consumptionPercentage: Int?
    /// `DECLINE`, `GRANT_FULL` or `GRANT_PRORATED`; omitted for no preference.
    public var refundPreference: String?

    /// Creates a body.
    public init(
        customerConsented: Bool, deliveryStatus: String, sampleContentProvided: Bool, consumptionPercentage: Int?,
        refundPreference: String?
    ) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }
}
