import Postgres

/// Which of Apple's sources told the white table about a transaction (`apple_transactions.source`,
/// `transaction_claims.source`).
public struct TransactionSource: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, PostgresEncodable, PostgresNonNullDecodable
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    /// verifyReceipt's answer about an uploaded receipt.
    public static let verifyReceipt = TransactionSource(rawValue: "verify_receipt")
    /// An uploaded receipt verified offline.
    public static let localReceipt = TransactionSource(rawValue: "local_receipt")
    /// An uploaded StoreKit 2 JWS transaction.
    public static let jws = TransactionSource(rawValue: "jws")
    /// The App Store Server API (transaction info, history, order lookup).
    public static let serverAPI = TransactionSource(rawValue: "server_api")
    /// An App Store Server Notification.
    public static let notification = TransactionSource(rawValue: "notification")
    /// Look Up Order ID, asked by the support desk.
    public static let orderLookup = TransactionSource(rawValue: "order_lookup")
    /// An uploaded Google Play purchase (its signed `purchaseData`).
    public static let playPurchase = TransactionSource(rawValue: "play_purchase")
    /// The Google Play Developer API (productsv2, subscriptionsv2, orders).
    public static let playAPI = TransactionSource(rawValue: "play_api")
    /// Google Play's voided purchases list.
    public static let playVoided = TransactionSource(rawValue: "play_voided")
}

extension TransactionSource {
    /// Every source this build records.
    public static let known: [TransactionSource] = [
        .verifyReceipt, .localReceipt, .jws, .serverAPI, .notification, .orderLookup, .playPurchase, .playAPI,
        .playVoided,
    ]
}
