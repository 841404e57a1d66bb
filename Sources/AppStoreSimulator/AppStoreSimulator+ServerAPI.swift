import AppStore
import Foundation
import Hummingbird
import NIOCore

extension AppStoreSimulator {
    /// The Server API endpoints the client uses.
    enum ServerAPIEndpoint: String, Sendable {
        case history = "history"
        case transactionInfo = "transaction_info"
        case refundHistory = "refund_history"
        case orderLookup = "order_lookup"
    }

    func addServerAPIRoutes(to router: Router<BasicRequestContext>) {
        let simulator = self
        // Apple's production and sandbox are two hosts; here the sandbox lives under /sandbox.
        for (prefix, environment) in [("", AppStoreEnvironment.production), ("sandbox/", .sandbox)] {
            for (path, endpoint) in [
                ("inApps/v2/history/:id", ServerAPIEndpoint.history),
                ("inApps/v1/transactions/:id", .transactionInfo),
                ("inApps/v2/refund/lookup/:id", .refundHistory),
                ("inApps/v1/lookup/:id", .orderLookup),
            ] {
                router.get(RouterPath(prefix + path)) { request, context in
                    await simulator.serveAPI(
                        request, environment: environment, endpoint: endpoint, id: context.parameters.get("id") ?? "")
                }
            }
        }
    }

    private func serveAPI(
        _ request: Request, environment: AppStoreEnvironment, endpoint: ServerAPIEndpoint, id: String
    ) async -> Response {
        let (latency, action, forge) = state.beginServerAPIRequest(
            endpoint: environment == .sandbox ? "sandbox" : "production")
        var answer = "cancelled"
        defer { state.endServerAPIRequest(answer: answer) }
        do {
            let truncated = #"{"signedTransactions":["eyJ"#
            if let fault = try await actOut(action, after: latency, truncatedJSON: truncated, answer: &answer) {
                return fault
            }
        } catch {
            return Response(status: .internalServerError)
        }

        let bundleId: String
        switch SimulatorTokenCheck.check(
            authorization: request.headers[.authorization], key: apiKey, bundleIDs: configuration.apiBundleIDs,
            now: Date())
        {
        case .success(let bid):
            bundleId = bid
        case .failure(let failure):
            answer = "401"
            configuration.logger.info("Server API token refused", metadata: ["reason": "\(failure)"])
            // Apple's 401 body is plain text, not JSON.
            return Self.text("Unauthenticated\n\nRequest ID: SIM\n", status: .unauthorized)
        }

        var query: [String: [String]] = [:]
        for parameter in request.uri.queryParameters {
            query[String(parameter.key), default: []].append(String(parameter.value))
        }
        let (code, response) = answerAPI(
            endpoint, id: id, environment: environment, bundleId: bundleId, query: query, forge: forge)
        answer = code
        return response
    }

    /// The answer to an authenticated request, and its label for the stats.
    private func answerAPI(
        _ endpoint: ServerAPIEndpoint, id: String, environment: AppStoreEnvironment, bundleId: String,
        query: [String: [String]], forge: Bool
    ) -> (String, Response) {
        let notFound = ("4040010", Self.apiError(4_040_010, "Transaction id not found."))
        if endpoint != .orderLookup, id.isEmpty || !id.allSatisfy(\.isASCII) || !id.allSatisfy(\.isNumber) {
            return ("4000006", Self.apiError(4_000_006, "Invalid transaction id."))
        }
        let appAppleId = environment == .production ? configuration.appAppleId : nil
        do {
            switch endpoint {
            case .transactionInfo:
                guard let entry = transactions.entry(id), entry.transaction.environment == environment,
                    entry.transaction.bundleId == bundleId
                else { return notFound }
                return (
                    "200",
                    Self.json(encoding: TransactionInfoResponse(signedTransactionInfo: try sign(entry, forge: forge)))
                )
            case .orderLookup:
                let entries = transactions.order(id, environment: environment, bundleId: bundleId)
                let signed = try entries.map { try sign($0, forge: forge) }
                return (
                    "200",
                    Self.json(
                        encoding: OrderLookupResponse(status: entries.isEmpty ? 1 : 0, signedTransactions: signed))
                )
            case .history, .refundHistory:
                guard var entries = transactions.history(of: id, environment: environment, bundleId: bundleId) else {
                    return notFound
                }
                if endpoint == .refundHistory {
                    entries = entries.filter { $0.transaction.revocationDate != nil }
                } else {
                    entries = Self.filter(entries, query)
                }
                guard let page = Self.page(entries, revision: query["revision"]?.first, size: configuration.pageSize)
                else { return ("4000005", Self.apiError(4_000_005, "Invalid revision.")) }
                let signed = try page.entries.map { try sign($0, forge: forge) }
                if endpoint == .refundHistory {
                    return (
                        "200",
                        Self.json(
                            encoding: RefundHistoryResponse(
                                signedTransactions: signed, revision: page.revision, hasMore: page.hasMore))
                    )
                }
                return (
                    "200",
                    Self.json(
                        encoding: HistoryResponse(
                            revision: page.revision, bundleId: bundleId, appAppleId: appAppleId,
                            environment: environment,
                            hasMore: page.hasMore, signedTransactions: signed))
                )
            }
        } catch {
            return ("500", Self.apiError(5_000_000, "Simulator failed to sign: \(error)"))
        }
    }

    /// `startDate`/`endDate` on purchase date, `revoked`, `productType` (Apple's query values).
    private static func filter(
        _ entries: [SimulatorTransactionStore.Entry], _ query: [String: [String]]
    ) -> [SimulatorTransactionStore.Entry] {
        let start = query["startDate"]?.first.flatMap { Int64($0) }.map(Date.init(millisecondsSince1970:))
        let end = query["endDate"]?.first.flatMap { Int64($0) }.map(Date.init(millisecondsSince1970:))
        let revoked = query["revoked"]?.first.flatMap { Bool($0) }
        let types: Set<ProductType> = Set(
            (query["productType"] ?? []).compactMap { value -> ProductType? in
                switch value {
                case "AUTO_RENEWABLE": .autoRenewable
                case "NON_RENEWABLE": .nonRenewing
                case "CONSUMABLE": .consumable
                case "NON_CONSUMABLE": .nonConsumable
                default: nil
                }
            })
        return entries.filter { entry in
            let purchased = entry.transaction.purchaseDate ?? .distantPast
            if let start, purchased < start { return false }
            if let end, purchased >= end { return false }
            if let revoked, (entry.transaction.revocationDate != nil) != revoked { return false }
            if !types.isEmpty, !types.contains(entry.transaction.type ?? .consumable) { return false }
            return true
        }
    }

    /// One page after `revision`: the revision names the last modification the client has seen,
    /// so anything modified since (a refund while paging) comes on a later page.
    static func page(_ entries: [SimulatorTransactionStore.Entry], revision: String?, size: Int)
        -> (entries: [SimulatorTransactionStore.Entry], revision: String, hasMore: Bool)?
    {
        var after: Int64 = 0
        if let revision {
            guard let data = JWSBase64URL.decode(revision), let text = String(data: data, encoding: .utf8),
                text.hasPrefix("after:"), let value = Int64(text.dropFirst("after:".count))
            else { return nil }
            after = value
        }
        let remaining = entries.filter { $0.modified > after }
        let page = Array(remaining.prefix(size))
        let last = page.last?.modified ?? after
        return (page, JWSBase64URL.encode(Data("after:\(last)".utf8)), remaining.count > page.count)
    }

    /// Signs a stored transaction now; `forge` corrupts the signature as an impostor's would be.
    func sign(_ entry: SimulatorTransactionStore.Entry, forge: Bool = false) throws -> String {
        var transaction = entry.transaction
        transaction.signedDate = transactions.nextSignedDate()
        let token = try ca.signJWS(transaction)
        guard forge else { return token }
        var parts = token.split(separator: ".").map(String.init)
        guard parts.count == 3, var signature = JWSBase64URL.decode(parts[2]), !signature.isEmpty else { return token }
        signature[signature.startIndex] ^= 0x01
        parts[2] = JWSBase64URL.encode(signature)
        return parts.joined(separator: ".")
    }

    static func apiError(_ code: Int, _ message: String) -> Response {
        let status: HTTPResponse.Status =
            switch code / 10_000 {
            case 400: .badRequest
            case 401: .unauthorized
            case 403: .forbidden
            case 404: .notFound
            case 429: .tooManyRequests
            default: .internalServerError
            }
        return json(["errorCode": code, "errorMessage": message], status: status)
    }

    static func text(_ text: String, status: HTTPResponse.Status) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
