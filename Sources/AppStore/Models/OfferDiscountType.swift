/// The payment mode of a subscription offer (`offerDiscountType`).
public struct OfferDiscountType: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: String
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// A free trial.
    public static let freeTrial = OfferDiscountType(rawValue: "FREE_TRIAL")
    /// A discounted price each period.
    public static let payAsYouGo = OfferDiscountType(rawValue: "PAY_AS_YOU_GO")
    /// One discounted payment for several periods.
    public static let payUpFront = OfferDiscountType(rawValue: "PAY_UP_FRONT")
    /// A one-time offer.
    public static let oneTime = OfferDiscountType(rawValue: "ONE_TIME")
}
