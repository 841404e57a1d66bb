import Postgres

/// Where an upload's verification stands (`upload_verifications.state`).
public struct VerificationState: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, PostgresEncodable, PostgresNonNullDecodable
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    /// Not verified yet.
    public static let pending = VerificationState(rawValue: "pending")
    /// Apple confirmed it.
    public static let verified = VerificationState(rawValue: "verified")
    /// Rejected for good.
    public static let invalid = VerificationState(rawValue: "invalid")
    /// A passing failure: verified again by a later run.
    public static let retry = VerificationState(rawValue: "retry")
}
