import Postgres

/// What the nightly run's rules say about one transaction of a customer's picture (SPEC section
/// 13): `ok`, `pending` (too young to judge), or the most severe finding kind of SPEC section 5.
public struct TransactionVerdict: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, PostgresEncodable, PostgresNonNullDecodable
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    /// Nothing to find.
    public static let ok = TransactionVerdict(rawValue: "ok")
    /// Bought after the run's judge-before time: judged by a later run.
    public static let pending = TransactionVerdict(rawValue: "pending")

    /// The verdict naming a finding.
    public init(_ finding: FindingKind) { rawValue = finding.rawValue }

    /// The finding the verdict names, if it is one.
    public var finding: FindingKind? { FindingKind(rawValue: rawValue) }
}
