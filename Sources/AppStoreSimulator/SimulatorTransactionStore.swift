import AppStore
import Foundation
import Synchronization

/// The simulator's purchases, by customer, with a modification sequence: Get Transaction
/// History pages by it, as Apple's pages by modification, so a transaction refunded while a
/// client pages comes again on a later page.
public final class SimulatorTransactionStore: Sendable {
    /// One stored purchase.
    struct Entry: Sendable {
        var customer: String
        var orderId: String
        /// The payload without `signedDate`, which is set when it is signed.
        var transaction: JWSTransaction
        /// Increases with every change, across the store.
        var modified: Int64
    }

    private struct Inner {
        var entries: [String: Entry] = [:]
        var sequence: Int64 = 0
        var lastSignedMilliseconds: Int64 = 0
    }

    private let inner = Mutex(Inner())

    /// An empty store.
    public init() {}

    /// How many transactions it holds.
    public var count: Int { inner.withLock { $0.entries.count } }

    func insert(_ transaction: JWSTransaction, customer: String, orderId: String) {
        inner.withLock { inner in
            inner.sequence += 1
            inner.entries[transaction.transactionId ?? ""] = Entry(
                customer: customer, orderId: orderId, transaction: transaction, modified: inner.sequence)
        }
    }

    /// Applies `change` to a transaction and marks it modified; nil when the id is unknown.
    func update(_ id: String, _ change: (inout JWSTransaction) -> Void) -> Entry? {
        inner.withLock { inner in
            guard var entry = inner.entries[id] else { return nil }
            change(&entry.transaction)
            inner.sequence += 1
            entry.modified = inner.sequence
            inner.entries[id] = entry
            return entry
        }
    }

    func entry(_ id: String) -> Entry? { inner.withLock { $0.entries[id] } }

    /// Every transaction of the customer who owns `id`, in the same environment and app,
    /// by modification; nil when `id` is unknown there.
    func history(of id: String, environment: AppStoreEnvironment, bundleId: String) -> [Entry]? {
        inner.withLock { inner in
            guard let owner = inner.entries[id], owner.transaction.environment == environment,
                owner.transaction.bundleId == bundleId
            else { return nil }
            return inner.entries.values.filter {
                $0.customer == owner.customer && $0.transaction.environment == environment
                    && $0.transaction.bundleId == bundleId
            }.sorted { $0.modified < $1.modified }
        }
    }

    /// The transactions of an order.
    func order(_ orderId: String, environment: AppStoreEnvironment, bundleId: String) -> [Entry] {
        inner.withLock { inner in
            inner.entries.values.filter {
                $0.orderId == orderId && $0.transaction.environment == environment
                    && $0.transaction.bundleId == bundleId
            }.sorted { $0.modified < $1.modified }
        }
    }

    /// A signing time later than every earlier one, so that data signed later always has the
    /// newer `signedDate`, as it has at Apple (whose clock runs while a client pages).
    func nextSignedDate(now: Date = Date()) -> Date {
        inner.withLock { inner in
            inner.lastSignedMilliseconds = max(now.millisecondsSince1970, inner.lastSignedMilliseconds + 1)
            return Date(millisecondsSince1970: inner.lastSignedMilliseconds)
        }
    }
}
