/// Whether the customer consented to a subscription price increase (`priceIncreaseStatus`).
public struct PriceIncreaseStatus: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: Int
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// Not yet responded.
    public static let notResponded = PriceIncreaseStatus(rawValue: 0)
    /// Consented, or no consent needed.
    public static let consented = PriceIncreaseStatus(rawValue: 1)
}
