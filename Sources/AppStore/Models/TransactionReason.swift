/// Why a transaction exists: a customer purchase or an automatic renewal (`transactionReason`).
public struct TransactionReason: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: String
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// The customer bought (or upgraded, or redeemed an offer).
    public static let purchase = TransactionReason(rawValue: "PURCHASE")
    /// An automatic subscription renewal.
    public static let renewal = TransactionReason(rawValue: "RENEWAL")
}
