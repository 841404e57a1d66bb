/// How urgent a finding is (SPEC section 5), most urgent first. Extensible like the AppStore
/// models: a value read from the database that this build does not know keeps its raw text and
/// sorts last.
public struct Severity: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let high = Severity(rawValue: "high")
    public static let medium = Severity(rawValue: "medium")
    public static let low = Severity(rawValue: "low")

    /// Every severity this build knows, most urgent first.
    public static let known: [Severity] = [.high, .medium, .low]

    /// The order lists sort by: 0 for the most urgent; an unknown severity after every known one.
    public var rank: Int { Self.known.firstIndex(of: self) ?? Self.known.count }

    public var description: String { rawValue }
}
