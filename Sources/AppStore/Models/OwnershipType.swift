/// Whether the customer bought the product or has it through Family Sharing (`inAppOwnershipType`).
public struct OwnershipType: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: String
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// The customer bought it.
    public static let purchased = OwnershipType(rawValue: "PURCHASED")
    /// A family member bought it and shares it.
    public static let familyShared = OwnershipType(rawValue: "FAMILY_SHARED")
}
