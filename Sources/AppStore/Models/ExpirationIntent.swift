/// Why a subscription expired (`expirationIntent`).
public struct ExpirationIntent: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: Int
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// The customer cancelled.
    public static let customerCancelled = ExpirationIntent(rawValue: 1)
    /// Billing failed.
    public static let billingError = ExpirationIntent(rawValue: 2)
    /// The customer did not consent to a price increase.
    public static let priceIncreaseDeclined = ExpirationIntent(rawValue: 3)
    /// The product was not available at renewal.
    public static let productUnavailable = ExpirationIntent(rawValue: 4)
    /// Any other reason.
    public static let other = ExpirationIntent(rawValue: 5)
}
