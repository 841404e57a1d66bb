import Foundation
import Logging
import Postgres

extension ReconciliationJob {
    /// The refund-request answerer, when answers are on (`RECONCILE_CONSUMPTION_ANSWERS`) and the
    /// Server API is configured.
    var consumptionAnswerer: ConsumptionAnswerer? {
        guard settings.consumption.enabled, let serverAPI else { return nil }
        return serverAPI.consumptionAnswerer(settings: settings, logger: logger)
    }

    /// Runs `body` (the run, under the run lock) with the answers to refund requests beside it:
    /// they start once `body` calls `historySynced` (its sync stage stored what Notification
    /// History had), on a connection of their own, and are waited for after `body` returns or
    /// throws, the run lock released by then. Each answer may wait a call's whole retry budget on
    /// Apple (`RECONCILE_MAX_ATTEMPTS` × `RECONCILE_APPLE_TIMEOUT` and the backoff between): the
    /// run's stages never do, and a receiver or the next nightly run locked out meanwhile is not.
    /// An answer recorded before the run's report counts in it, a later one in the next run's
    /// (report.json's `consumption` counts since the previous run). A failure here is logged and
    /// does not fail the run: the requests wait for the next sync, run or receiver pass.
    func withAnswersBeside<T: Sendable>(
        _ answerer: ConsumptionAnswerer, _ body: (_ historySynced: @escaping @Sendable () -> Void) async throws -> T
    ) async throws -> T {
        let (synced, signal) = AsyncStream.makeStream(of: Void.self)
        let databaseURL = settings.databaseURL
        let logger = logger
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var iterator = synced.makeAsyncIterator()
                guard await iterator.next() != nil else { return }
                do {
                    let summary = try await answerer.answerPending(on: try Connection(url: databaseURL))
                    logger.info("refund requests answered", metadata: [
                        "consumption.answered": "\(summary.answered)", "consumption.expired": "\(summary.expired)",
                        "consumption.failed": "\(summary.failed)", "consumption.waiting": "\(summary.waiting)",
                    ])
                } catch is CancellationError {
                } catch {
                    logger.error("refund requests not answered; the next sync or run tries again", metadata: [
                        "error": "\(error)",
                    ])
                }
            }
            let value: T
            do {
                value = try await body {
                    signal.yield()
                    signal.finish()
                }
            } catch {
                signal.finish()
                try? await group.waitForAll()
                throw error
            }
            signal.finish()
            try await group.waitForAll()
            return value
        }
    }
}
