/// Details of a notification type (`subtype`).
public struct NotificationSubtype: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: String
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// First subscription purchase.
    public static let initialBuy = NotificationSubtype(rawValue: "INITIAL_BUY")
    /// Resubscription.
    public static let resubscribe = NotificationSubtype(rawValue: "RESUBSCRIBE")
    /// An upgrade within the group.
    public static let upgrade = NotificationSubtype(rawValue: "UPGRADE")
    /// A downgrade within the group.
    public static let downgrade = NotificationSubtype(rawValue: "DOWNGRADE")
    /// Renewed after a billing retry.
    public static let billingRecovery = NotificationSubtype(rawValue: "BILLING_RECOVERY")
    /// Expired after the customer turned off renewal.
    public static let voluntary = NotificationSubtype(rawValue: "VOLUNTARY")
    /// Billing retry period ended without recovery.
    public static let billingRetry = NotificationSubtype(rawValue: "BILLING_RETRY")
}
