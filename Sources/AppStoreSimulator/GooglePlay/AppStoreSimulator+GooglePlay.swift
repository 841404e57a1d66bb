import Foundation
import Hummingbird
import NIOCore

extension AppStoreSimulator {
    /// Google Play on the same port (SPEC section 18's simulator):
    /// - `POST /token`: the OAuth 2.0 token endpoint of the service account (``PlaySimulatorSettings/tokenURI``).
    /// - `/androidpublisher/v3/applications/{packageName}/…`: `purchases/productsv2/tokens/{token}`,
    ///   `purchases/subscriptionsv2/tokens/{token}`, `purchases/voidedpurchases`, `orders/{orderId}`,
    ///   `purchases/products/{productId}/tokens/{token}:acknowledge`,
    ///   `purchases/subscriptions/{subscriptionId}/tokens/{token}:acknowledge`, with a bearer token
    ///   from `/token`; faults from `POST /sim/faults`'s `play` member.
    /// - Admin under `/sim/play/`: `purchases` (create), `purchases/{token}` (read),
    ///   `purchases/{token}/renew|complete|cancel|acknowledge|void`, `expire-unacknowledged`,
    ///   `notifications` (push one; GET: those pushed), `notification-url`, `settings`, `stats`.
    func addGooglePlayRoutes(to router: Router<BasicRequestContext>) {
        let simulator = self
        router.post("token") { request, _ in await simulator.playToken(request) }
        addPlayAPIRoutes(to: router)

        let play = self.play
        router.get("sim/play/settings") { _, _ in
            await Self.playAdmin(nil) { _ in
                try await play.prepareKeys()
                return PlaySettingsBody(try play.settings())
            }
        }
        router.get("sim/play/stats") { _, _ in Self.json(encoding: play.stats) }
        router.delete("sim/play/stats") { _, _ in
            play.resetStats()
            return Self.json(encoding: play.stats)
        }
        router.post("sim/play/purchases") { request, _ in
            await Self.playAdmin(request) { body in
                let asked = try JSONDecoder().decode(PlayPurchaseRequest.self, from: body)
                try await play.prepareKeys(for: asked.packageName.map { [$0] } ?? [])
                return try play.createPurchase(asked)
            }
        }
        router.get("sim/play/purchases/:token") { _, context in
            let token = context.parameters.get("token") ?? ""
            return await Self.playAdmin(nil) { _ in
                guard let purchase = play.purchase(token) else { throw PlaySimulator.noPurchase(token) }
                return purchase
            }
        }
        router.post("sim/play/purchases/:token/renew") { request, context in
            let token = context.parameters.get("token") ?? ""
            return await Self.playAdmin(request) { body in
                let asked = try Self.decodeOptional(RenewRequest.self, body)
                return try play.renewSubscription(
                    token, expiryTimeMillis: asked?.expiryTimeMillis, periodDays: asked?.periodDays ?? 30)
            }
        }
        router.post("sim/play/purchases/:token/complete") { request, context in
            let token = context.parameters.get("token") ?? ""
            return await Self.playAdmin(request) { _ in try play.completePendingPurchase(token) }
        }
        router.post("sim/play/purchases/:token/cancel") { request, context in
            let token = context.parameters.get("token") ?? ""
            return await Self.playAdmin(request) { _ in try play.cancelPendingPurchase(token) }
        }
        router.post("sim/play/purchases/:token/acknowledge") { request, context in
            let token = context.parameters.get("token") ?? ""
            return await Self.playAdmin(request) { _ in try play.acknowledgeFromClient(token) }
        }
        router.post("sim/play/purchases/:token/void") { request, context in
            let token = context.parameters.get("token") ?? ""
            return await Self.playAdmin(request) { body in
                let asked = try Self.decodeOptional(VoidRequest.self, body)
                return try play.voidPurchase(
                    token, orderId: asked?.orderId, voidedReason: asked?.voidedReason ?? 0,
                    voidedSource: asked?.voidedSource ?? 0, voidedTimeMillis: asked?.voidedTimeMillis,
                    quantity: asked?.quantity)
            }
        }
        router.post("sim/play/expire-unacknowledged") { request, _ in
            await Self.playAdmin(request) { body in
                let asked = try Self.decodeOptional(ExpireRequest.self, body)
                return try play.expireUnacknowledged(
                    now: asked?.nowMillis.map(Date.init(millisecondsSince1970:)) ?? Date())
            }
        }
        router.post("sim/play/notifications") { request, _ in
            var request = request
            do {
                let body = try await request.collectBody(upTo: 1 << 20)
                let asked = try JSONDecoder().decode(PlayNotificationRequest.self, from: Data(body.readableBytesView))
                return Self.json(encoding: try await play.pushNotification(asked))
            } catch let error as SimulatorRequestError {
                return Self.json(["error": error.description], status: error.status)
            } catch {
                return Self.json(["error": "\(error)"], status: .badRequest)
            }
        }
        router.get("sim/play/notifications") { _, _ in Self.json(encoding: play.pushes) }
        // Where pushes go when a request names no URL; an empty body pushes nowhere.
        router.put("sim/play/notification-url") { request, _ in
            var request = request
            let body = (try? await request.collectBody(upTo: 4096)).map { String(buffer: $0) } ?? ""
            let text = body.trimmingCharacters(in: .whitespacesAndNewlines)
            guard
                text.isEmpty
                    || URL(string: text).map({ ["http", "https"].contains($0.scheme) && $0.host != nil }) == true
            else { return Self.text("not an http(s) URL\n", status: .badRequest) }
            play.pushURL = text.isEmpty ? nil : text
            return Response(status: .noContent)
        }
    }

    private struct RenewRequest: Decodable {
        var expiryTimeMillis: Int64?
        var periodDays: Int?
    }

    private struct VoidRequest: Decodable {
        var orderId: String?
        var voidedReason: Int?
        var voidedSource: Int?
        var voidedTimeMillis: Int64?
        /// A quantity-based partial refund of this many units.
        var quantity: Int?
    }

    private struct ExpireRequest: Decodable {
        var nowMillis: Int64?
    }

    /// The settings as `GET /sim/play/settings` answers them: the job's variables and the key file.
    private struct PlaySettingsBody: Encodable {
        var environment: [String: String]
        var serviceAccount: String
        var tokenURI: String

        init(_ settings: PlaySimulatorSettings) {
            environment = settings.jobEnvironment
            serviceAccount = String(decoding: settings.serviceAccountJSON, as: UTF8.self)
            tokenURI = settings.tokenURI
        }
    }

    private static func decodeOptional<T: Decodable>(_ type: T.Type, _ body: Data) throws -> T? {
        body.isEmpty ? nil : try JSONDecoder().decode(type, from: body)
    }

    /// Runs an admin action on the request body (none for GET); errors become JSON with a 4xx status.
    private static func playAdmin<T: Encodable>(_ request: Request?, _ action: (Data) async throws -> T) async
        -> Response
    {
        do {
            var body = Data()
            if var request {
                body = Data(try await request.collectBody(upTo: 1 << 20).readableBytesView)
            }
            return json(encoding: try await action(body))
        } catch let error as SimulatorRequestError {
            return json(["error": error.description], status: error.status)
        } catch {
            return json(["error": "\(error)"], status: .badRequest)
        }
    }
}
