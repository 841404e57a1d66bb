import Foundation
import Postgres

/// Which review items to list or export. Empty lists and nil values do not filter.
public struct ReviewFilter: Sendable, Equatable {
    /// Any of these statuses.
    public var statuses: [ReviewStatus] = []
    /// Any of these kinds (raw values of `FindingKind`).
    public var kinds: [FindingKind] = []
    /// Any of these severities (`high`, `medium`, `low`).
    public var severities: [String] = []
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

    /// No filter: every item.
    public init() {}

    /// The severities a filter accepts.
    public static let severityValues = ["high", "medium", "low"]

    /// A `WHERE` clause over `reconcile.review_items` and its parameters, numbered from `$1`.
    /// `excludingKinds` leaves the kind filter out, for counts by kind beside a kind filter.
    func sql(excludingKinds: Bool = false) -> (clause: String, parameters: [any PostgresEncodable]) {
        var conditions: [String] = []
        var parameters: [any PostgresEncodable] = []
        func add(_ condition: (String) -> String, _ value: any PostgresEncodable) {
            parameters.append(value)
            conditions.append(condition("$\(parameters.count)"))
        }
        if !statuses.isEmpty { add({ "status = ANY(\($0)::text[])" }, statuses.map(\.rawValue)) }
        if !kinds.isEmpty, !excludingKinds { add({ "kind = ANY(\($0)::text[])" }, kinds.map(\.rawValue)) }
        if !severities.isEmpty { add({ "severity = ANY(\($0)::text[])" }, severities) }
        if let userID { add({ "user_id = \($0)" }, userID) }
        if let productID { add({ "product_id = \($0)" }, productID) }
        if let transactionID {
            add({ "(transaction_id = \($0) OR original_transaction_id = \($0))" }, transactionID)
        }
        if let assignee { add({ "assignee = \($0)" }, assignee) }
        if let since { add({ "created_at >= \($0)" }, since) }
        if let until { add({ "created_at < \($0)" }, until) }
        return (conditions.isEmpty ? "TRUE" : conditions.joined(separator: " AND "), parameters)
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
