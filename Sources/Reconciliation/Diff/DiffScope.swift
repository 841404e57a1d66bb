import Foundation

/// Which transactions a diff judges exactly. The same stages serve every scope; only how
/// `diff_scope` is filled differs (`sql/diff/scope/`, as `DiffPlan` declares).
public enum DiffScope: Sendable, Equatable {
    /// A run over a window: what the window touched, plus what the run itself touched and every
    /// open review item (`scope/touched_by_run.sql`, `scope/window.sql`) — or, when the run
    /// carries unchanged items over, only those whose inputs changed (`scope/changed_bindings.sql`).
    case window(since: Date, until: Date)
    /// A run over the whole history up to `until`: what the run touched, plus every transaction
    /// one pass cannot prove clean (`scope/touched_by_run.sql`, `scope/whole_history.sql`).
    case wholeHistory(until: Date)
    /// Exactly these transactions (and a non-consumable's family): the support desk's view of
    /// one customer (`scope/transactions.sql`). The review queue is not for such a diff.
    case transactions([String])

    /// The window's end, if the scope has one.
    public var until: Date? {
        switch self {
        case .window(_, let until), .wholeHistory(let until): until
        case .transactions: nil
        }
    }
}
