import Foundation
import Postgres

/// Which review items to list or export. Empty lists and nil values do not filter.
public struct ReviewFilter: Sendable, Equatable {
    /// Any of these statuses.
    public var statuses: [ReviewStatus] = []
    /// Any of these kinds (raw values of `FindingKind`).
    public var kinds: [FindingKind] = []
    /// Any of these severities.
    public var severities: [Severity] = []
    /// Exactly this account.
    public var userID: String?
    /// Exactly this product.
    public var productID: String?
    /// This transaction, as `transaction_id` or `original_transaction_id`.
    public var transactionID: String?
    /// Claimed by this person.
    public var assignee: String?
    /// Detected (created) at or after this instant.
    public var since: Date?
    /// Detected before this instant.
    public var until: Date?
    /// First detected by this run.
    public var runID: Int64?
    /// Worth at most this much, per currency (upper-case ISO code → milliunits), as a policy's
    /// `max_amount`: an item in a currency not named, or of unknown value, is left out. Empty does
    /// not filter.
    public var maxAmountMilliByCurrency: [String: Int64] = [:]
    /// In this currency.
    public var currency: String?
    /// Any of these items (by id): those a person ticked on the queue page.
    public var ids: [Int64] = []
    /// About this store's purchases (SPEC section 18).
    public var store: Store?

    /// No filter: every item.
    public init() {}

    /// The filter's values for the statements of `sql/review/`: `:'filter'`, one
    /// `reconcile.review_filter` (migration 0030) that `reconcile.review_item_matches` reads, its
    /// fields null where the filter does not filter. The one place the filter is bound.
    /// `excludingKinds` leaves the kind filter out, for counts by kind beside a kind filter.
    func values(excludingKinds: Bool = false) -> SQLValues {
        func list(_ values: [String]) -> [String]? { values.isEmpty ? nil : values }
        let maxAmounts = maxAmountMilliByCurrency.sorted { $0.key < $1.key }
        // In the order of the type's fields.
        let fields: [any PostgresEncodable] = [
            list(statuses.map(\.rawValue)), excludingKinds ? [String]?.none : list(kinds.map(\.rawValue)),
            list(severities.map(\.rawValue)), userID, productID, transactionID, assignee, since, until, runID,
            list(maxAmounts.map(\.key)), maxAmounts.isEmpty ? [Int64]?.none : maxAmounts.map(\.value), currency,
            ids.isEmpty ? [Int64]?.none : ids, store,
        ]
        return ["filter": PostgresRecord(fields)]
    }
}

/// One page of a filtered queue.
public struct ReviewPage: Sendable {
    /// The items of this page.
    public var items: [ReviewItem]
    /// Items matching the filter, on every page.
    public var total: Int
    /// This page, from 1.
    public var page: Int
    /// Items per page.
    public var limit: Int
    /// Items per kind matching every other part of the filter, every kind listed.
    public var countsByKind: [(kind: FindingKind, count: Int)]

    /// The number of pages (at least 1).
    public var pageCount: Int { max(1, (total + limit - 1) / limit) }
}
