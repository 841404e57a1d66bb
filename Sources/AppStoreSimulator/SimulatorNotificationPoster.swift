import AppStore
import AsyncHTTPClient
import Foundation
import Logging
import Synchronization

/// Posts every notification the simulator makes to the app's notification URL, as Apple does
/// (`appstore-sim serve --notification-url URL`), and records each attempt's result for Get
/// Notification History's `sendAttempts`.
///
/// Apple counts `200`–`206` as delivered and retries anything else "five times, at 1, 12, 24, 48,
/// and 72 hours after the previous attempt", in production only: "In the sandbox environment, the
/// App Store server attempts to send the notification one time"
/// (developer.apple.com/documentation/appstoreservernotifications/responding-to-app-store-server-notifications).
/// `retryScale` compresses the schedule for tests and the demo (0.001: an hour is 3.6 s).
public final class SimulatorNotificationPoster: Sendable {
    /// Apple's waits before each retry of a version 2 notification, after the previous attempt.
    public static let appleRetrySchedule: [TimeInterval] = [1, 12, 24, 48, 72].map { $0 * 3600 }

    private let target: Mutex<String?>
    /// The factor applied to Apple's waits (1: Apple's hours).
    public let retryScale: Double
    /// How long one attempt may take, head and body (Apple does not say; a few seconds at most,
    /// its engineers advise on the forums).
    public let attemptTimeout: Duration
    private let log: SimulatorNotificationLog
    private let logger: Logger

    init(url: String?, retryScale: Double, attemptTimeout: Duration, log: SimulatorNotificationLog, logger: Logger) {
        target = Mutex(url)
        self.retryScale = retryScale
        self.attemptTimeout = attemptTimeout
        self.log = log
        self.logger = logger
    }

    /// Where notifications are posted; nil posts none (they are only kept for Get Notification History).
    public var url: String? {
        get { target.withLock { $0 } }
        set { target.withLock { $0 = newValue } }
    }

    /// Posts `body` in the background, retrying on Apple's schedule; each attempt's result is
    /// appended to the notification's `sendAttempts`.
    func post(_ body: SignedNotificationBody, uuid: String, environment: AppStoreEnvironment, to url: String) {
        let waits = environment == .sandbox ? [] : Self.appleRetrySchedule.map { $0 * retryScale }
        let data = (try? JSONEncoder().encode(body)) ?? Data()
        Task { [self] in
            for attempt in 0...waits.count {
                if attempt > 0 {
                    guard (try? await Task.sleep(for: .milliseconds(Int64(waits[attempt - 1] * 1000)))) != nil else {
                        return
                    }
                }
                let result = await send(data, to: url)
                log.recordAttempt(uuid: uuid, SendAttempt(attemptDate: Date(), sendAttemptResult: result))
                logger.info(
                    "notification posted",
                    metadata: ["notification.uuid": "\(uuid)", "attempt": "\(attempt + 1)", "result": "\(result)"])
                if result == SendAttempt.success { return }
            }
        }
    }

    /// One attempt: Apple's `sendAttemptResult` for it.
    private func send(_ data: Data, to url: String) async -> String {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(data)
        let timeout = attemptTimeout
        do {
            return try await HTTPClient.withHTTPClient(configuration: .init(redirectConfiguration: .disallow)) {
                http in
                try await withThrowingTaskGroup(of: String?.self) { [request] group in
                    group.addTask {
                        let response = try await http.execute(request, timeout: .seconds(timeout.components.seconds))
                        for try await _ in response.body {}
                        return (200...206).contains(Int(response.status.code))
                            ? SendAttempt.success : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
                    }
                    group.addTask {
                        try await Task.sleep(for: timeout)
                        return nil
                    }
                    defer { group.cancelAll() }
                    return try await group.next().flatMap { $0 } ?? "TIMED_OUT"
                }
            }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return "TIMED_OUT"
        } catch {
            logger.notice("notification not delivered", metadata: ["url": "\(url)", "error": "\(error)"])
            return "NO_RESPONSE"
        }
    }
}
