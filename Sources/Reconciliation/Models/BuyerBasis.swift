import Postgres

/// How the diff decided who bought a transaction (`sql/diff/43_buyer.sql`, the evidence's
/// `buyer.basis`, `lookup --json`'s `basis`; SPEC section 13's names).
public struct BuyerBasis: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, PostgresEncodable, PostgresNonNullDecodable
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    /// The transaction's `appAccountToken`, through `reconcile.account_tokens` or equal to an account id.
    public static let appAccountToken = BuyerBasis(rawValue: "app_account_token")
    /// The purchase's `applicationUsername`: an account id, or the SHA-256 of one.
    public static let applicationUsername = BuyerBasis(rawValue: "application_username")
    /// Nothing binds it: the one account that uploaded it (or whose history listed it).
    public static let uploader = BuyerBasis(rawValue: "uploader")

    /// Every basis the diff writes, strongest first.
    public static let known: [BuyerBasis] = [.appAccountToken, .applicationUsername, .uploader]
}
