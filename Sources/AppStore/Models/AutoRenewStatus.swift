/// Whether a subscription renews automatically (`autoRenewStatus`).
public struct AutoRenewStatus: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: Int
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// Automatic renewal is off.
    public static let off = AutoRenewStatus(rawValue: 0)
    /// Automatic renewal is on.
    public static let on = AutoRenewStatus(rawValue: 1)
}
