/// Why Apple refunded or revoked a transaction (`revocationReason`).
public struct RevocationReason: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: Int
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// Refunded for another reason (e.g. an accidental purchase).
    public static let other = RevocationReason(rawValue: 0)
    /// Refunded because of an actual or perceived issue in the app.
    public static let appIssue = RevocationReason(rawValue: 1)
}
