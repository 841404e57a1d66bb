import Foundation
import Logging
import Postgres

/// Work a long-running process does beside its passes, never in them (SPEC section 16): the
/// receiver's answers to refund requests (``ConsumptionAnswerer``) and its forwarding to the app's
/// endpoint (``NotificationForwarder``), and a nightly run's answers. Each waits on someone else —
/// Apple, which may take a call's whole retry budget per request, or the app's endpoint — and the
/// passes must not: a refund is judged within a minute of Apple's POST whatever Apple and the app
/// do.
///
/// One round at a time, on a connection of its own (opened again after a round that failed: the
/// server restarted, or the session was ended), at once when ``run()`` starts, then after each
/// ``trigger()`` (a trigger during a round asks for one more after it), and at least every
/// `interval` (`afterFailure` after a round that failed).
final class ReceiverChore: Sendable {
    /// What the chore does, for the logs (`refund-request answers`, `forwarding`).
    let name: String
    let databaseURL: String?
    let interval: Duration
    let afterFailure: Duration
    let round: @Sendable (Connection) async throws -> Void
    let logger: Logger
    private let wakeup = ReceiverWakeup()

    init(
        _ name: String, databaseURL: String?, interval: Duration, afterFailure: Duration, logger: Logger,
        round: @escaping @Sendable (Connection) async throws -> Void
    ) {
        self.name = name
        self.databaseURL = databaseURL
        self.interval = interval
        self.afterFailure = afterFailure
        self.logger = logger
        self.round = round
    }

    /// A round starts at once, or after the one running.
    func trigger() {
        wakeup.wake()
    }

    /// Rounds until the task is cancelled (the process shutting down): the round in flight stops
    /// at once; what it had leased (a request, a copy) waits for its lease to run out.
    func run() async {
        var connection: Connection?
        var wait: Duration?
        while !Task.isCancelled {
            if let wait {
                await wakeup.wait(atMost: wait)
                guard !Task.isCancelled else { return }
            }
            do {
                let open = try connection ?? Connection(url: databaseURL)
                connection = open
                try await round(open)
                wait = interval
            } catch is CancellationError {
                return
            } catch {
                guard !Task.isCancelled else { return }
                connection = nil
                wait = afterFailure
                logger.error("receiver \(name) failed; trying again", metadata: ["error": "\(error)"])
            }
        }
    }
}
