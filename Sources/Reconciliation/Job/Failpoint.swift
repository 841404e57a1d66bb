import Foundation
import Synchronization

/// A testing hook, not a feature: `RECONCILE_FAILPOINT=NAME` (or `NAME@N`) makes the process stop
/// itself with SIGSTOP the first (or N-th) time a run passes the point called NAME, so that the
/// crash tests can SIGKILL it at an exact place (between two statements of a transaction, after
/// the diff committed, ...) instead of at a random instant. The variable is read once; unset,
/// each point costs one comparison with nil. Operators never set it.
///
/// The points, in the order a run passes them: `verify.verdict` (an upload's verdict arrived,
/// its batch not yet recorded), `verify.record` (inside the transaction recording a batch, before
/// commit), `verify.recorded` (a batch committed), `diff.computed` (inside the diff transaction),
/// `queue.upsert` (inside the queue upsert, items inserted, auto-resolution not yet done),
/// `report.write` (diff committed, report half written, run not yet finished), `report.written`
/// (the report whole in its hidden folder, run not yet finished), `report.finished` (run recorded
/// as finished, its report not yet renamed into place). The notification receiver's:
/// `receiver.stored` (a notification committed, Apple not yet answered), `receiver.applied`
/// (notifications applied, their transactions not yet judged), `receiver.judge` (inside the
/// judgement's transaction, before commit), `receiver.forward` (a copy leased, not yet sent).
/// The review queue's: `review.decide` (inside a decision's transaction, its event and outbox row
/// written, before commit: `review.decide@1500` stops a bulk decision at its 1,500th item).
enum Failpoint {
    private static let armed: (name: String, hit: Int)? = {
        guard let raw = ProcessInfo.processInfo.environment["RECONCILE_FAILPOINT"], !raw.isEmpty else { return nil }
        let parts = raw.split(separator: "@", maxSplits: 1).map(String.init)
        return (parts[0], parts.count == 2 ? max(1, Int(parts[1]) ?? 1) : 1)
    }()
    private static let passes = Mutex(0)

    /// Stops the process here when the failpoint names this point and this is the pass it counts to.
    static func pass(_ name: String) {
        guard let armed, armed.name == name else { return }
        let count = passes.withLock { count in
            count += 1
            return count
        }
        // raise, not kill(getpid()): the signal goes to this very thread, which stops before it
        // returns, so nothing past the point (a COMMIT) can slip out while the others stop.
        if count == armed.hit { raise(SIGSTOP) }
    }
}
