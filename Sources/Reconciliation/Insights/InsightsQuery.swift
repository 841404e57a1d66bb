import Foundation
import Postgres

/// What `reconcile insights` asks (SPEC section 19): the span of purchase dates, the store, and the
/// dimensions to break the judged purchases down by.
public struct InsightsQuery: Sendable, Equatable {
    /// Purchases from this instant; nil: the whole history.
    public var since: Date?
    /// Purchases before this instant.
    public var until: Date
    /// One store's purchases; nil: every store's.
    public var store: Store?
    /// The dimensions, in the order asked.
    public var dimensions: [InsightDimension]

    public init(
        since: Date? = nil, until: Date, store: Store? = nil, dimensions: [InsightDimension] = InsightDimension.allCases
    ) {
        self.since = since
        self.until = until
        self.store = store
        self.dimensions = dimensions
    }

    /// Whether a review item in `status` counts as a finding of its purchase. The queue's open
    /// items (open, claimed, waiting for approval: what every run's report lists) and the items a
    /// person resolved (the finding held: a leak granted or moved later still leaked) count; a
    /// dismissed item (a person said it is no finding) and an auto-resolved one (a later run no
    /// longer detected it: the app delivered meanwhile) do not.
    public static func counts(_ status: ReviewStatus) -> Bool {
        switch status {
        case .open, .inReview, .awaitingApproval, .resolved: true
        case .dismissed, .autoResolved: false
        }
    }

    /// The statuses that count, as `sql/insights/segments.sql` takes them.
    static var countedStatuses: [String] { ReviewStatus.allCases.filter(counts).map(\.rawValue) }
}
