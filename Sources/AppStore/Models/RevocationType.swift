/// How Apple revoked a transaction (`revocationType`).
public struct RevocationType: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: String
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// A full refund.
    public static let refundFull = RevocationType(rawValue: "REFUND_FULL")
    /// A prorated refund.
    public static let refundProrated = RevocationType(rawValue: "REFUND_PRORATED")
    /// Family Sharing access was withdrawn.
    public static let familyRevoke = RevocationType(rawValue: "FAMILY_REVOKE")
}
