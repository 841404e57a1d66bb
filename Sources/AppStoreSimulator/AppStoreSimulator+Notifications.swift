import AppStore
import Foundation
import Hummingbird
import NIOCore

extension AppStoreSimulator {
    /// Get Notification History and Send Consumption Information V2, production at the root and
    /// sandbox under `/sandbox`, with the same token checks as the other Server API endpoints.
    func addNotificationRoutes(to router: Router<BasicRequestContext>) {
        let simulator = self
        // The consumption answers received, for a person at the simulator (tests read the log).
        router.get("sim/consumption") { _, _ in
            let data = (try? AppStoreJSON.encoder().encode(simulator.notifications.consumptionAnswers)) ?? Data("[]".utf8)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        // Where notifications are posted (`--notification-url`), changed while running: the
        // demo starts the receiver after the simulator. An empty body posts none.
        router.put("sim/notification-url") { request, _ in
            var request = request
            let body = (try? await request.collectBody(upTo: 4096)).map { String(buffer: $0) } ?? ""
            let text = body.trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.isEmpty || URL(string: text).map({ ["http", "https"].contains($0.scheme) && $0.host != nil }) == true
            else { return Self.text("not an http(s) URL\n", status: .badRequest) }
            simulator.poster.url = text.isEmpty ? nil : text
            return Response(status: .noContent)
        }
        for (prefix, environment) in [("", AppStoreEnvironment.production), ("sandbox/", .sandbox)] {
            router.post(RouterPath(prefix + "inApps/v1/notifications/history")) { request, _ in
                await simulator.authenticated(request) { bundleId, body in
                    simulator.notificationHistory(
                        body, token: request.uri.queryParameters["paginationToken"].map(String.init),
                        environment: environment, bundleId: bundleId)
                }
            }
            router.put(RouterPath(prefix + "inApps/v2/transactions/consumption/:id")) { request, context in
                let id = context.parameters.get("id") ?? ""
                // The faults' latency holds Apple's acceptance of an answer too (Apple slow to
                // answer: issue 36 item 9).
                let latency = simulator.state.faults.latencyMilliseconds
                if latency > 0 { try? await Task.sleep(for: .milliseconds(latency)) }
                return await simulator.authenticated(request) { bundleId, body in
                    simulator.consumption(body, transactionId: id, environment: environment, bundleId: bundleId)
                }
            }
        }
    }

    /// Runs `answer` for a request whose token the simulator accepts; Apple's plain-text 401 otherwise.
    private func authenticated(_ request: Request, _ answer: (String, Data) -> Response) async -> Response {
        switch SimulatorTokenCheck.check(
            authorization: request.headers[.authorization], key: apiKey, bundleIDs: configuration.apiBundleIDs,
            now: Date())
        {
        case .failure:
            return Self.text("Unauthenticated\n\nRequest ID: SIM\n", status: .unauthorized)
        case .success(let bundleId):
            var request = request
            guard let body = try? await request.collectBody(upTo: 1 << 16) else {
                return Self.apiError(4_000_000, "Bad request.")
            }
            return answer(bundleId, Data(body.readableBytesView))
        }
    }

    /// One page of 20 (the configured page size); the token is the offset of the next page.
    private func notificationHistory(
        _ body: Data, token: String?, environment: AppStoreEnvironment, bundleId: String
    ) -> Response {
        guard let request = try? AppStoreJSON.decoder().decode(NotificationHistoryRequest.self, from: body) else {
            return Self.apiError(4_000_000, "Invalid request body.")
        }
        var offset = 0
        if let token {
            guard let data = JWSBase64URL.decode(token), let text = String(data: data, encoding: .utf8),
                text.hasPrefix("offset:"), let value = Int(text.dropFirst("offset:".count)), value >= 0
            else { return Self.apiError(4_000_008, "Invalid pagination token.") }
            offset = value
        }
        let all = notifications.history(request, environment: environment, bundleId: bundleId)
        let page = all.dropFirst(offset).prefix(configuration.pageSize)
        let next = offset + page.count
        let response = NotificationHistoryResponse(
            paginationToken: JWSBase64URL.encode(Data("offset:\(next)".utf8)), hasMore: next < all.count,
            notificationHistory: page.map {
                NotificationHistoryRecord(signedPayload: $0.signedPayload, sendAttempts: $0.sendAttempts)
            })
        // Apple's dates are epoch milliseconds.
        let data = (try? AppStoreJSON.encoder().encode(response)) ?? Data("{}".utf8)
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Records the answer and accepts it (202), as Apple does; a body without consent is refused.
    private func consumption(
        _ body: Data, transactionId: String, environment: AppStoreEnvironment, bundleId: String
    ) -> Response {
        guard let entry = transactions.entry(transactionId), entry.transaction.environment == environment,
            entry.transaction.bundleId == bundleId
        else { return Self.apiError(4_040_010, "Transaction id not found.") }
        guard let request = try? JSONDecoder().decode(ConsumptionRequest.self, from: body) else {
            return Self.apiError(4_000_000, "Invalid request body.")
        }
        // Apple answers InvalidCustomerConsentedError (HTTP 400) to anything but true.
        guard request.customerConsented else {
            return Self.apiError(4_000_070, "Invalid customer consented.")
        }
        notifications.record(
            SimulatorNotificationLog.ConsumptionAnswer(
                transactionId: transactionId, environment: environment.rawValue, body: request, receivedAt: Date()))
        return Response(status: .accepted)
    }
}
