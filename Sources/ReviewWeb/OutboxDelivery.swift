import Foundation
import Logging
import Postgres
import Reconciliation

/// Delivers the outbox to the app's webhook after a decision made in the browser, as `review
/// resolve` does after one made at the terminal (SPEC section 13), without holding up the page:
/// one delivery pass at a time, in the background, on a connection of its own (not one of the
/// pages'). A decision made while a pass runs asks for one more pass after it, so no decision
/// waits for the next run. Each pass is bounded by the webhook's attempts and timeout per row;
/// what still fails stays undelivered, with its error, for the next pass or run.
actor OutboxDelivery {
    private let webhook: ActionOutbox.Webhook
    private let databaseURL: String?
    private let logger: Logger
    private var running = false
    private var again = false

    init(webhook: ActionOutbox.Webhook, databaseURL: String?, logger: Logger) {
        self.webhook = webhook
        self.databaseURL = databaseURL
        self.logger = logger
    }

    /// Starts a delivery pass, or asks the running one for another.
    func trigger() {
        guard !running else {
            again = true
            return
        }
        running = true
        Task { await self.drain() }
    }

    private func drain() async {
        repeat {
            again = false
            await Self.pass(webhook: webhook, databaseURL: databaseURL, logger: logger)
        } while again
        running = false
    }

    private nonisolated static func pass(webhook: ActionOutbox.Webhook, databaseURL: String?, logger: Logger) async {
        do {
            let outbox = ActionOutbox(connection: try Connection(url: databaseURL))
            let result = try await outbox.deliver(to: webhook, logger: logger)
            logger.info("outbox delivered after a decision", metadata: [
                "outbox.delivered": "\(result.delivered)", "outbox.failed": "\(result.failed)",
            ])
        } catch {
            logger.error("outbox delivery after a decision failed", metadata: ["error": "\(error)"])
        }
    }
}
