import Postgres

/// How a run ended, as `reconcile.runs.status` and the report say it (SPEC section 10). Extensible
/// like the AppStore models: a status written by a newer build is kept as it is.
public struct RunStatus: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, PostgresEncodable
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }
    public var postgresText: String? { rawValue }

    /// In progress (holds the run lock).
    public static let running = RunStatus(rawValue: "running")
    /// Finished; every upload verified, every lookup answered.
    public static let completed = RunStatus(rawValue: "completed")
    /// Finished, with uploads left to retry or Server API calls unanswered.
    public static let completedWithUnresolved = RunStatus(rawValue: "completed_with_unresolved")
    /// Stopped by an error.
    public static let failed = RunStatus(rawValue: "failed")
    /// Stopped by a signal; the work in flight was rolled back.
    public static let interrupted = RunStatus(rawValue: "interrupted")

    /// The run finished: its findings were reported and its watermark counts.
    public var isCompleted: Bool { self == .completed || self == .completedWithUnresolved }
}
