/// The kind of in-app product a transaction is for (`type`).
public struct ProductType: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: String
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// Used once and bought again (coins).
    public static let consumable = ProductType(rawValue: "Consumable")
    /// Bought once, restorable (unlocks).
    public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
    /// Renews automatically until cancelled.
    public static let autoRenewable = ProductType(rawValue: "Auto-Renewable Subscription")
    /// A subscription for a fixed period.
    public static let nonRenewing = ProductType(rawValue: "Non-Renewing Subscription")
}
