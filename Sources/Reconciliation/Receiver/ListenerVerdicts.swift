import Crypto
import Foundation
import Synchronization

/// What the receiver's listener verified, by the row of `reconcile.notifications` it stored, for
/// the worker of the same process: the worker applies those rows without verifying them again
/// (verifying a notification is two ECDSA checks and its payloads decoded, which the worker
/// repeated for every notification the listener had just verified).
///
/// Only what this process's listener verified and stored is here. A row the app's own endpoint
/// inserted, a row stored before a restart, a verdict dropped by the bound, and a row whose body is
/// not the one verified (by its SHA-256) are verified by the worker as before.
public final class ListenerVerdicts: Sendable {
    private struct Entry: Sendable {
        let digest: [UInt8]
        let verdict: NotificationVerdict
    }

    private struct State {
        var entries: [Int64: Entry] = [:]
        /// The rows recorded, oldest first, from `start` on.
        var order: [Int64] = []
        var start = 0
    }

    private let state = Mutex(State())
    /// How many of the latest rows stored keep their verdict (a verdict is a few KB at most).
    public let capacity: Int

    public init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    /// How many verdicts wait for the worker (tests).
    public var count: Int { state.withLock { $0.entries.count } }

    /// Notes that row `id`, holding exactly `body`, was stored with this verdict.
    func record(id: Int64, body: String, verdict: NotificationVerdict) {
        let entry = Entry(digest: Self.digest(body), verdict: verdict)
        state.withLock { state in
            state.entries[id] = entry
            state.order.append(id)
            // Only the last `capacity` rows stored keep their verdict, taken or not.
            while state.order.count - state.start > capacity {
                state.entries[state.order[state.start]] = nil
                state.start += 1
            }
            if state.start >= capacity {
                state.order.removeFirst(state.start)
                state.start = 0
            }
        }
    }

    /// The verdict recorded for row `id` if its body is still the one verified; taken, so a row is
    /// reused once (a pass that rolls back verifies it again).
    func take(id: Int64, body: String) -> NotificationVerdict? {
        guard let entry = state.withLock({ $0.entries.removeValue(forKey: id) }) else { return nil }
        return entry.digest == Self.digest(body) ? entry.verdict : nil
    }

    private static func digest(_ body: String) -> [UInt8] {
        var hash = SHA256()
        var body = body
        body.withUTF8 { hash.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return Array(hash.finalize())
    }
}
