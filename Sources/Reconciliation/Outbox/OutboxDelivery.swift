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
/// after it, so no decision waits for the next run. What still fails stays undelivered, with its
/// error, for the next pass or run.
///
/// ``run()`` does all this until its task is cancelled (the process shutting down): the pass in
/// flight stops at once, and the row it was sending keeps its lease (`next_delivery_at`) until the
/// lease runs out, when any later pass may send it again (the app deduplicates by its
/// `Idempotency-Key`).
public final class OutboxDelivery: Sendable {
    let webhook: ActionOutbox.Webhook
    let databaseURL: String?
    let logger: Logger
    /// Woken by a decision; a wakeup during a pass makes the next wait end at once.
    private let wakeup = ReceiverWakeup()

    public init(webhook: ActionOutbox.Webhook, databaseURL: String?, logger: Logger) {
        self.webhook = webhook
        self.databaseURL = databaseURL
        self.logger = logger
    }

    /// A decision wrote outbox rows: a pass starts at once, or after the one running.
    public func trigger() {
        wakeup.wake()
    }

    /// Delivery passes until the task is cancelled, one after each ``trigger()``.
    public func run() async {
        while !Task.isCancelled {
            await wakeup.wait(atMost: nil)
            guard !Task.isCancelled else { return }
            do {
                let outbox = ActionOutbox(connection: try Connection(url: databaseURL))
                let result = try await outbox.deliver(to: webhook, logger: logger)
                logger.info("outbox delivery pass", metadata: [
                    "outbox.delivered": "\(result.delivered)", "outbox.failed": "\(result.failed)",
                    "outbox.left": "\(result.left)",
                ])
            } catch is CancellationError {
                return
            } catch {
                guard !Task.isCancelled else { return }
                logger.error("outbox delivery pass failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
