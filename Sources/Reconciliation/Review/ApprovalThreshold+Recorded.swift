import Foundation
import Postgres

/// The threshold recorded in the database (`reconcile.approval_thresholds`, migration 0027).
extension ApprovalThreshold {
    /// One recorded limit, with who recorded it and when (`reconcile review approval-threshold`).
    public struct RecordedLimit: Sendable, Equatable {
        public var currency: String
        public var aboveMilli: Int64
        public var recordedAt: Date
        public var recordedBy: String
    }

    /// The limits recorded, currencies in order.
    public static func recordedLimits(on connection: Connection) throws -> [RecordedLimit] {
        try connection.query(SQL.recorded).map {
            RecordedLimit(
                currency: try $0["currency"], aboveMilli: try $0["above_milli"], recordedAt: try $0["recorded_at"],
                recordedBy: try $0["recorded_by"])
        }
    }

    /// The threshold recorded; ``none`` when nothing is.
    public static func recorded(on connection: Connection) throws -> ApprovalThreshold {
        ApprovalThreshold(milliByCurrency: Dictionary(
            try recordedLimits(on: connection).map { ($0.currency, $0.aboveMilli) }) { $1 })
    }

    /// Records this threshold where it is stricter than the recorded one (a currency not recorded,
    /// or a lower limit), as `process`, and returns the threshold in force: the stricter of both.
    /// Runs in the caller's transaction, if any (a decision's). Nothing is written when the
    /// recorded threshold is as strict already, so decisions do not queue on its rows; a limit
    /// higher than the recorded one never replaces it (an operator raises or removes one:
    /// ``replaceRecorded(with:on:by:)``). `process` is asked only when something is written.
    @discardableResult
    public func record(on connection: Connection, by process: @autoclosure () -> String) throws -> ApprovalThreshold {
        let recorded = try Self.recorded(on: connection)
        let lower = milliByCurrency.filter { currency, limit in recorded.milliByCurrency[currency].map { limit < $0 } ?? true }
            .sorted { $0.key < $1.key }
        if !lower.isEmpty {
            try connection.execute(
                SQL.record, ["currencies": lower.map(\.key), "above_millis": lower.map(\.value), "recorded_by": process()])
        }
        return stricter(recorded)
    }

    /// What a process configured with a threshold does when it starts (`run`, `serve`,
    /// `notifications receive`, `migrate`): records it as `reconcile <command>`, so that a process
    /// without the setting applies it from then on even before this one decides anything. Nothing
    /// without a threshold.
    public func recordAtStart(_ command: String, on connection: Connection) throws {
        guard isEnabled else { return }
        try record(on: connection, by: Self.process(command))
    }

    /// The operator's act: removes the recorded threshold and records `threshold` instead
    /// (``none``: nothing), in one transaction. A process configured with a stricter threshold
    /// records its own again when it next starts or decides.
    public static func replaceRecorded(with threshold: ApprovalThreshold, on connection: Connection, by process: String)
        throws
    {
        try connection.transaction {
            try connection.execute(SQL.clear)
            try threshold.record(on: connection, by: process)
        }
    }

    /// Who a process is, as recorded with the limits it records: `reconcile serve (pid 42 on
    /// db-1)`, the operating-system login appended when known.
    public static func process(_ command: String, login: String? = nil) -> String {
        let info = ProcessInfo.processInfo
        return "reconcile \(command) (pid \(info.processIdentifier) on \(info.hostName)"
            + (login.map { ", login \($0)" } ?? "") + ")"
    }

    enum SQL {
        static let recorded: SQLFile = "review/approval_recorded.sql"
        static let record: SQLFile = "review/approval_record.sql"
        static let clear: SQLFile = "review/approval_clear.sql"
    }
}
