import Postgres

/// Which store a transaction, an upload, a finding or a review item is about (SPEC section 18):
/// `app_store` or `google_play`, stored as that text (`apple_transactions.store`,
/// `review_items.store`, `action_outbox.store`, the deliveries' optional `store`).
public enum Store: String, CaseIterable, Codable, Sendable, CustomStringConvertible, PostgresEncodable,
    PostgresNonNullDecodable
{
    case appStore = "app_store"
    case googlePlay = "google_play"

    public var description: String { rawValue }

    /// The store of a ledger order id when the deliveries relation has no `store` column: an id
    /// starting `GPA.` is Google Play's, every other Apple's.
    public init(ledgerTransactionID id: String) {
        self = id.hasPrefix("GPA.") ? .googlePlay : .appStore
    }
}
