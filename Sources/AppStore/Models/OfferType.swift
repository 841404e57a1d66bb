/// The kind of offer a transaction or renewal uses (`offerType`).
public struct OfferType: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: Int
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// An introductory offer.
    public static let introductory = OfferType(rawValue: 1)
    /// A promotional offer.
    public static let promotional = OfferType(rawValue: 2)
    /// An offer code.
    public static let offerCode = OfferType(rawValue: 3)
    /// A win-back offer.
    public static let winBack = OfferType(rawValue: 4)
}
