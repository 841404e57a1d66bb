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
            let status = try await withThrowingTaskGroup(of: UInt?.self) { group in
                group.addTask {
                    let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
                    var read = 0
                    for try await chunk in response.body {
                        read += chunk.readableBytes
                        if read > 1 << 16 { break }
                    }
                    try Task.checkCancellation()
                    return response.status.code
                }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return nil
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
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
