import Foundation
import Logging
import Postgres

/// The outbox's delivery in a long-running process (`reconcile serve`, `reconcile notifications
/// receive`), beside what the process is for and never in its way: a decision only wakes it
/// (``trigger()``), so neither a page's answer nor the receiver's next pass waits for the app's
/// webhook, however slow it is.
///
/// One delivery pass at a time (``ActionOutbox/deliver(to:logger:)``, bounded by the webhook's
/// pass budget), on a connection of its own. A decision made during a pass asks for one more pass
/// after it. A pass that leaves rows undelivered (the webhook down or slow, the database
/// unreachable) is followed by another after a wait that doubles from `retry.first` up to
/// `retry.limit`, until every row is delivered: SPEC section 13's "retries with backoff until a
/// 2xx" holds for an outage longer than one pass's attempts (a deploy of the app), not only until
/// the next decision or the next night. A pass that leaves nothing ends the retries; the next
/// decision starts a pass again.
///
/// ``run()`` does all this until its task is cancelled (the process shutting down): the pass in
/// flight stops at once, and the row it was sending keeps its lease (`next_delivery_at`) until the
/// lease runs out, when any later pass may send it again (the app deduplicates by its
/// `Idempotency-Key`).
public final class OutboxDelivery: Sendable {
    /// The waits between passes while rows stay undelivered.
    public struct Retry: Sendable {
        /// The wait after the first pass that left rows undelivered; doubled after each such pass.
        public var first: Duration
        /// The longest wait: an app back after a long outage has its rows within this long.
        public var limit: Duration

        public init(first: Duration = .seconds(5), limit: Duration = .seconds(300)) {
            self.first = first
            self.limit = max(first, limit)
        }
    }

    let webhook: ActionOutbox.Webhook
    let databaseURL: String?
    let retry: Retry
    let logger: Logger
    /// Woken by a decision; a wakeup during a pass makes the next wait end at once.
    private let wakeup = ReceiverWakeup()

    public init(webhook: ActionOutbox.Webhook, databaseURL: String?, retry: Retry = Retry(), logger: Logger) {
        self.webhook = webhook
        self.databaseURL = databaseURL
        self.retry = retry
        self.logger = logger
    }

    /// A decision wrote outbox rows: a pass starts at once, or after the one running.
    public func trigger() {
        wakeup.wake()
    }

    /// Delivery passes until the task is cancelled: one at once, for what an earlier process left
    /// undelivered (it stopped during an outage, or crashed), then one after each ``trigger()``,
    /// and while rows stay undelivered one after each wait of ``Retry``.
    public func run() async {
        var wait: Duration?
        var started = false
        while !Task.isCancelled {
            if started { await wakeup.wait(atMost: wait) }
            started = true
            guard !Task.isCancelled else { return }
            do {
                let outbox = ActionOutbox(connection: try Connection(url: databaseURL))
                let result = try await outbox.deliver(to: webhook, logger: logger)
                logger.info("outbox delivery pass", metadata: [
                    "outbox.delivered": "\(result.delivered)", "outbox.failed": "\(result.failed)",
                    "outbox.left": "\(result.left)",
                ])
                wait = result.failed == 0 && result.left == 0 ? nil : next(after: wait)
            } catch is CancellationError {
                return
            } catch {
                guard !Task.isCancelled else { return }
                wait = next(after: wait)
                logger.error("outbox delivery pass failed", metadata: ["error": "\(error)"])
            }
            if let wait {
                logger.notice("outbox rows left undelivered; trying again", metadata: ["outbox.retry_in": "\(wait)"])
            }
        }
    }

    /// The wait after a pass that left rows undelivered, `previous` the wait before it (nil: none).
    func next(after previous: Duration?) -> Duration {
        guard let previous else { return retry.first }
        return min(previous * 2, retry.limit)
    }
}
