import AppStore
import AsyncHTTPClient
import Foundation

extension Preflight {
    /// Whether the outbox webhook answers: a GET (no decision is sent; deliveries are signed
    /// POSTs) whose whole answer, head and body, comes within 10 seconds. Any HTTP status
    /// passes: the address, TLS and a server are there.
    public static func webhook(_ settings: Settings) async -> [CheckResult] {
        guard let url = settings.outboxWebhookURL else {
            return [CheckResult(
                "outbox webhook", passed: true,
                "not configured: the app reads reconcile.action_outbox itself (set RECONCILE_OUTBOX_WEBHOOK_URL and "
                    + "RECONCILE_OUTBOX_WEBHOOK_SECRET to have decisions POSTed)")]
        }
        let limit = Duration.seconds(10)
        do {
            let status = try await HTTPExchange.send(HTTPClientRequest(url: url), within: limit, http: .shared)
            guard let status else {
                return [CheckResult("outbox webhook", passed: false, "\(url) gave no complete answer within \(limit)")]
            }
            return [CheckResult(
                "outbox webhook", passed: true, "\(url) answers (HTTP \(status) to a GET; deliveries are signed POSTs)")]
        } catch {
            return [CheckResult("outbox webhook", passed: false, "\(url) unreachable: \(error)")]
        }
    }
}
