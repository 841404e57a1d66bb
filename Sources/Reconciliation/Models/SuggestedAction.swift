import Postgres

/// What support staff should probably do about a finding (`review_items.suggested_action`).
public struct SuggestedAction: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, PostgresEncodable, PostgresNonNullDecodable
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    public static let grant = SuggestedAction(rawValue: "grant")
    public static let revoke = SuggestedAction(rawValue: "revoke")
    public static let move = SuggestedAction(rawValue: "move")
    /// Look closer: no single action follows from the finding.
    public static let investigate = SuggestedAction(rawValue: "investigate")
}
