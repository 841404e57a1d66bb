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

    /// The upload kinds this store's clients send (SPEC sections 3 and 18); the SQL function
    /// `reconcile.upload_store` (migration 0029) says the same, and a test holds the two equal.
    public var uploadKinds: [UploadKind] {
        switch self {
        case .appStore: [.appReceipt, .signedTransaction]
        case .googlePlay: [.playPurchase]
        }
    }

    /// The store whose clients send `kind`, nil for a kind no store knows.
    public init?(uploadKind kind: UploadKind) {
        guard let store = Self.allCases.first(where: { $0.uploadKinds.contains(kind) }) else { return nil }
        self = store
    }

    /// The store of a ledger order id when the deliveries relation has no `store` column: an id
    /// starting `GPA.` is Google Play's, every other Apple's.
    public init(ledgerTransactionID id: String) {
        self = id.hasPrefix("GPA.") ? .googlePlay : .appStore
    }
}
