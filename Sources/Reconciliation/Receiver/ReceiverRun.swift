import Foundation
import Postgres

/// One pass of the receiver that applied notifications or judged transactions (a run of kind
/// `receiver`), as the runs page lists it apart from the nightly runs.
public struct ReceiverRun: Sendable, Equatable {
    public var id: Int64
    public var startedAt: Date
    /// Notifications it applied.
    public var applied: Int
    /// Transactions it judged.
    public var judged: Int
    /// Review items it opened.
    public var opened: Int

    /// The latest passes, newest first.
    public static func recent(limit: Int, on connection: Connection) throws -> [ReceiverRun] {
        try connection.query(ReceiverSQL.recentRuns, ["limit": min(max(limit, 1), 1000)]).map { row in
            ReceiverRun(
                id: try row["id"], startedAt: try row["started_at"], applied: try row["applied"],
                judged: try row["judged"], opened: try row["opened"])
        }
    }
}
