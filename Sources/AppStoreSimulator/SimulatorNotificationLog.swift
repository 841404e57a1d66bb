import AppStore
import Foundation
import Synchronization

/// The notifications the simulator sent (for Get Notification History) and the consumption
/// answers it received (Send Consumption Information), so that tests can check both.
public final class SimulatorNotificationLog: Sendable {
    /// One notification as Apple keeps it for Get Notification History.
    public struct Sent: Sendable {
        /// The body's `signedPayload`, byte for byte the same on every page that returns it.
        public var signedPayload: String
        public var notificationUUID: String
        public var signedDate: Date
        /// When it was made, by the clock (or the backdated date): the span of a history request
        /// selects on this. Its `signedDate` is unique per millisecond, so it can run a few
        /// milliseconds ahead of the clock, and a sync that asked right after it was made would
        /// miss it.
        public var madeAt: Date
        public var notificationType: NotificationType
        public var transactionId: String?
        public var environment: AppStoreEnvironment
        public var bundleId: String
        /// Apple's attempts to deliver it to the app's endpoint.
        public var sendAttempts: [SendAttempt]
    }

    /// One `PUT /inApps/v2/transactions/consumption/{transactionId}` the simulator accepted.
    public struct ConsumptionAnswer: Codable, Hashable, Sendable {
        public var transactionId: String
        public var environment: String
        public var body: ConsumptionRequest
        public var receivedAt: Date
    }

    private struct Inner {
        var sent: [Sent] = []
        var answers: [ConsumptionAnswer] = []
    }

    private let inner = Mutex(Inner())

    /// An empty log.
    public init() {}

    func record(_ sent: Sent) { inner.withLock { $0.sent.append(sent) } }

    func record(_ answer: ConsumptionAnswer) { inner.withLock { $0.answers.append(answer) } }

    /// Appends one attempt to post a notification to its `sendAttempts`.
    func recordAttempt(uuid: String, _ attempt: SendAttempt) {
        inner.withLock { inner in
            guard let index = inner.sent.firstIndex(where: { $0.notificationUUID == uuid }) else { return }
            inner.sent[index].sendAttempts.append(attempt)
        }
    }

    /// Every notification made, oldest first, with its send attempts so far.
    public var sent: [Sent] { inner.withLock { $0.sent } }

    /// The consumption answers received, oldest first.
    public var consumptionAnswers: [ConsumptionAnswer] { inner.withLock { $0.answers } }

    /// The notifications a Get Notification History request selects, oldest first.
    func history(_ request: NotificationHistoryRequest, environment: AppStoreEnvironment, bundleId: String) -> [Sent] {
        inner.withLock { inner in
            inner.sent.filter { sent in
                // Requests carry milliseconds: both ends are taken whole, so a notification made in
                // the millisecond a sync asks up to is in (Apple does not say whether the ends are
                // inclusive: developer.apple.com/documentation/appstoreserverapi/notificationhistoryrequest).
                sent.environment == environment && sent.bundleId == bundleId
                    && sent.madeAt.millisecondsSince1970 >= request.startDate.millisecondsSince1970
                    && sent.madeAt.millisecondsSince1970 <= request.endDate.millisecondsSince1970
                    && (request.notificationType.map { $0 == sent.notificationType } ?? true)
                    && (request.transactionId.map { $0 == sent.transactionId } ?? true)
                    && (request.onlyFailures != true || sent.sendAttempts.last?.sendAttemptResult != SendAttempt.success)
            }.sorted { $0.signedDate < $1.signedDate }
        }
    }
}
