import Foundation
import Hummingbird
import NIOCore

extension AppStoreSimulator {
    /// The Google Play Developer API endpoints the job uses, under
    /// `/androidpublisher/v3/applications/{packageName}/` as at androidpublisher.googleapis.com.
    enum PlayEndpoint: String, Sendable {
        case productsV2 = "productsv2"
        case subscriptionsV2 = "subscriptionsv2"
        case voidedPurchases = "voidedpurchases"
        case orders = "orders"
        case productsAcknowledge = "products.acknowledge"
        case subscriptionsAcknowledge = "subscriptions.acknowledge"
    }

    func addPlayAPIRoutes(to router: Router<BasicRequestContext>) {
        let simulator = self
        let base = "androidpublisher/v3/applications/:packageName/"
        @Sendable func package(_ context: BasicRequestContext) -> String { context.parameters.get("packageName") ?? "" }
        router.get(RouterPath(base + "purchases/productsv2/tokens/:token")) { request, context in
            let token = context.parameters.get("token") ?? ""
            return await simulator.servePlay(request, .productsV2) {
                simulator.playProductPurchase(package: package(context), token: token)
            }
        }
        router.get(RouterPath(base + "purchases/subscriptionsv2/tokens/:token")) { request, context in
            let token = context.parameters.get("token") ?? ""
            return await simulator.servePlay(request, .subscriptionsV2) {
                simulator.playSubscriptionPurchase(package: package(context), token: token)
            }
        }
        router.get(RouterPath(base + "purchases/voidedpurchases")) { request, context in
            await simulator.servePlay(request, .voidedPurchases) {
                simulator.playVoidedPurchases(
                    package: package(context), query: request.uri.queryParameters, now: Date())
            }
        }
        router.get(RouterPath(base + "orders/:orderId")) { request, context in
            let orderId = context.parameters.get("orderId") ?? ""
            return await simulator.servePlay(request, .orders) {
                simulator.playOrder(package: package(context), orderId: orderId)
            }
        }
        // The method is a suffix of the token's segment (`{token}:acknowledge`, gRPC transcoding's
        // custom verb): Hummingbird matches it as a capture with a suffix.
        router.post(RouterPath(base + "purchases/products/:productId/tokens/{token}:acknowledge")) { request, context in
            let productId = context.parameters.get("productId") ?? ""
            let token = context.parameters.get("token") ?? ""
            return await simulator.servePlay(request, .productsAcknowledge) {
                simulator.playAcknowledge(package: package(context), productId: productId, token: token, kind: .oneTime)
            }
        }
        router.post(RouterPath(base + "purchases/subscriptions/:subscriptionId/tokens/{token}:acknowledge")) {
            request, context in
            let productId = context.parameters.get("subscriptionId") ?? ""
            let token = context.parameters.get("token") ?? ""
            return await simulator.servePlay(request, .subscriptionsAcknowledge) {
                simulator.playAcknowledge(
                    package: package(context), productId: productId, token: token, kind: .subscription)
            }
        }
    }

    /// Counts the request, acts out its fault, checks its access token, then answers.
    private func servePlay(_ request: Request, _ endpoint: PlayEndpoint, _ answer: () -> Response) async -> Response {
        play.store.count {
            $0.apiRequests += 1
            $0.requestsByEndpoint[endpoint.rawValue, default: 0] += 1
        }
        var label = "cancelled"
        defer {
            let answered = label
            play.store.count { $0.answers[answered, default: 0] += 1 }
        }
        let (latency, action) = state.beginPlayRequest()
        if latency > .zero {
            guard (try? await Task.sleep(for: latency)) != nil else { return Response(status: .internalServerError) }
        }
        if let fault = Self.playFault(action) {
            label = fault.label
            return fault.response
        }
        guard playAccessTokenIsValid(request.headers[.authorization]) else {
            label = "401"
            return Self.playError(
                .unauthorized, reason: "authError", domain: "global", status: "UNAUTHENTICATED",
                message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
                    + "cookie or other valid authentication credential.",
                location: "Authorization", locationType: "header")
        }
        let response = answer()
        label = String(response.status.code)
        return response
    }

    private static func playFault(_ action: PlaySimulatorFaults.Action) -> (label: String, response: Response)? {
        switch action {
        case .none:
            return nil
        case .http5xx(let code):
            return (
                "http_\(code)",
                playError(
                    HTTPResponse.Status(code: code), reason: "backendError", domain: "global",
                    status: code == 503 ? "UNAVAILABLE" : "INTERNAL", message: "Backend Error")
            )
        case .concurrentUpdate:
            return (
                "http_409",
                playError(
                    .conflict, reason: "concurrentUpdate", status: "ABORTED",
                    message: "The operation could not be performed since the object was already in the process of "
                        + "being updated.")
            )
        case .rateLimited:
            return (
                "http_429",
                playError(
                    .tooManyRequests, reason: "rateLimitExceeded", domain: "global", status: "RESOURCE_EXHAUSTED",
                    message: "Rate Limit Exceeded")
            )
        case .permissionDenied:
            return (
                "permission_denied",
                playError(
                    .unauthorized, reason: "permissionDenied", status: "PERMISSION_DENIED",
                    message: "The current user has insufficient permissions to perform the requested operation.")
            )
        case .empty401:
            return ("empty_401", Response(status: .unauthorized))
        }
    }

    // MARK: - Answers

    private func playPurchase(package: String, token: String, kind: PlaySimulatedPurchase.Kind)
        -> PlaySimulatedPurchase?
    {
        guard let purchase = play.purchase(token), purchase.packageName == package, purchase.kind == kind else {
            return nil
        }
        return purchase
    }

    private static var tokenNotFound: Response {
        playError(
            .notFound, reason: "notFound", status: "NOT_FOUND", message: "The purchase token was not found.",
            location: "token", locationType: "parameter")
    }

    func playProductPurchase(package: String, token: String) -> Response {
        guard let purchase = playPurchase(package: package, token: token, kind: .oneTime) else {
            return Self.tokenNotFound
        }
        typealias V2 = PlayAPIResources.ProductPurchaseV2
        // A refunded purchase reads CANCELLED with nothing refundable left; a partial refund only
        // lowers refundableQuantity.
        let state =
            purchase.pending ? "PENDING" : purchase.voided || purchase.pendingCanceled ? "CANCELLED" : "PURCHASED"
        let resource = V2(
            productLineItem: [
                .init(
                    productId: purchase.productId,
                    productOfferDetails: .init(
                        quantity: purchase.quantity, refundableQuantity: purchase.refundableQuantity,
                        consumptionState: purchase.consumed
                            ? "CONSUMPTION_STATE_CONSUMED" : "CONSUMPTION_STATE_YET_TO_BE_CONSUMED"))
            ],
            purchaseStateContext: .init(purchaseState: state),
            testPurchaseContext: purchase.testPurchase ? V2.TestPurchaseContext() : nil, orderId: purchase.orderId,
            obfuscatedExternalAccountId: purchase.obfuscatedAccountId,
            obfuscatedExternalProfileId: purchase.obfuscatedProfileId, regionCode: purchase.regionCode,
            purchaseCompletionTime: purchase.completionTimeMillis.map(PlayAPIResources.timestamp),
            acknowledgementState: Self.acknowledgementState(purchase))
        return Self.googleJSON(resource)
    }

    func playSubscriptionPurchase(package: String, token: String) -> Response {
        guard let purchase = playPurchase(package: package, token: token, kind: .subscription) else {
            return Self.tokenNotFound
        }
        typealias V2 = PlayAPIResources.SubscriptionPurchaseV2
        let now = Date().millisecondsSince1970
        let expired = (purchase.expiryTimeMillis ?? 0) <= now
        let state: String =
            if purchase.pendingCanceled {
                "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"
            } else if purchase.pending {
                "SUBSCRIPTION_STATE_PENDING"
            } else if purchase.voided || expired {
                "SUBSCRIPTION_STATE_EXPIRED"
            } else if !purchase.autoRenewing {
                "SUBSCRIPTION_STATE_CANCELED"
            } else {
                "SUBSCRIPTION_STATE_ACTIVE"
            }
        var canceled: V2.CanceledStateContext?
        if purchase.voided {
            // Google revokes a refunded subscription on its side.
            canceled = V2.CanceledStateContext(systemInitiatedCancellation: V2.Empty())
        } else if !purchase.autoRenewing {
            canceled = V2.CanceledStateContext(userInitiatedCancellation: V2.UserInitiatedCancellation())
        }
        let latest = purchase.pending ? nil : PlaySimulator.latestOrderID(purchase)
        let identifiers =
            purchase.obfuscatedAccountId == nil && purchase.obfuscatedProfileId == nil
            ? nil
            : V2.ExternalAccountIdentifiers(
                obfuscatedExternalAccountId: purchase.obfuscatedAccountId,
                obfuscatedExternalProfileId: purchase.obfuscatedProfileId)
        let resource = V2(
            regionCode: purchase.regionCode,
            lineItems: [
                .init(
                    productId: purchase.productId,
                    expiryTime: purchase.expiryTimeMillis.map(PlayAPIResources.timestamp),
                    autoRenewingPlan: .init(autoRenewEnabled: purchase.autoRenewing && !purchase.voided),
                    offerDetails: .init(basePlanId: "monthly"), latestSuccessfulOrderId: latest)
            ],
            startTime: purchase.pending ? nil : PlayAPIResources.timestamp(purchase.purchaseTimeMillis),
            subscriptionState: state, latestOrderId: latest, linkedPurchaseToken: purchase.linkedPurchaseToken,
            canceledStateContext: canceled, testPurchase: purchase.testPurchase ? V2.TestPurchase() : nil,
            acknowledgementState: Self.acknowledgementState(purchase), externalAccountIdentifiers: identifiers)
        return Self.googleJSON(resource)
    }

    private static func acknowledgementState(_ purchase: PlaySimulatedPurchase) -> String {
        purchase.acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING"
    }

    /// Google keeps voided purchases for 30 days.
    static let playVoidRetention: Int64 = 30 * 86_400_000

    /// `purchases.voidedpurchases.list`. Google's reference names the paging parameters
    /// `pageSelection.maxResults` and `pageSelection.token` while its client libraries send
    /// `maxResults` and `token`: both are read. `startTime` and `endTime` filter on when Google
    /// recorded the void and are ignored once a page token is given (the token carries the first
    /// page's window); a `startTime` older than 30 days lists from 30 days ago, as nothing older is kept.
    func playVoidedPurchases(package: String, query: Parameters, now: Date) -> Response {
        func value(_ name: String) -> String? {
            query[name[...]].map(String.init) ?? query["pageSelection.\(name)"[...]].map(String.init)
        }
        func invalid(_ message: String) -> Response {
            Self.playError(
                .badRequest, reason: "invalid", domain: "global", status: "INVALID_ARGUMENT", message: message)
        }
        let nowMillis = now.millisecondsSince1970
        let oldest = nowMillis - Self.playVoidRetention
        var window: PlayVoidPage
        if let token = value("token") {
            guard let page = PlayVoidPage(token: token) else { return invalid("Invalid pagination token.") }
            window = page
        } else {
            let start = value("startTime").map { Int64($0) } ?? oldest
            let end = value("endTime").map { Int64($0) } ?? nowMillis
            guard let start, let end else { return invalid("startTime and endTime are epoch milliseconds.") }
            guard start <= end else { return invalid("startTime is after endTime.") }
            guard let type = Int(value("type") ?? "0"), type == 0 || type == 1 else {
                return invalid("type is 0 or 1.")
            }
            window = PlayVoidPage(
                start: max(start, oldest), end: min(end, nowMillis), type: type,
                partial: value("includeQuantityBasedPartialRefund") == "true", offset: 0)
        }
        guard let size = Int(value("maxResults") ?? "1000"), size >= 1 else {
            return invalid("maxResults is a positive number.")
        }
        let pageSize = min(size, 1000)
        let matching = play.voids.filter { record in
            record.packageName == package && record.voidedTimeMillis >= max(window.start, oldest)
                && record.voidedTimeMillis <= window.end && (window.type == 1 || record.kind == .oneTime)
                && (window.partial || !record.partial)
        }.sorted { ($0.voidedTimeMillis, $0.sequence) < ($1.voidedTimeMillis, $1.sequence) }
        let page = matching.dropFirst(window.offset).prefix(pageSize)
        var next = window
        next.offset += page.count
        typealias List = PlayAPIResources.VoidedPurchasesListResponse
        let response = List(
            pageInfo: .init(totalResults: matching.count, resultPerPage: pageSize, startIndex: window.offset),
            tokenPagination: next.offset < matching.count ? .init(nextPageToken: next.token) : nil,
            voidedPurchases: page.isEmpty
                ? nil
                : page.map { record in
                    List.VoidedPurchase(
                        purchaseToken: record.purchaseToken, purchaseTimeMillis: String(record.purchaseTimeMillis),
                        voidedTimeMillis: String(record.voidedTimeMillis), orderId: record.orderId,
                        voidedSource: record.voidedSource, voidedReason: record.voidedReason,
                        voidedQuantity: record.voidedQuantity)
                })
        return Self.googleJSON(response)
    }

    /// `orders.get`, for every order (a subscription's renewals included); a licence tester's
    /// purchase has no order to find.
    func playOrder(package: String, orderId: String) -> Response {
        let found = play.store.withLock { inner -> PlaySimulatedPurchase? in
            inner.orders[orderId].flatMap { inner.purchases[$0] }
        }
        guard let purchase = found, purchase.packageName == package else {
            return Self.playError(
                .notFound, reason: "notFound", status: "NOT_FOUND", message: "The order was not found.",
                location: "orderId", locationType: "parameter")
        }
        typealias Order = PlayAPIResources.Order
        let orders = PlaySimulator.orderIDs(purchase)
        let index = orders.firstIndex(of: orderId) ?? 0
        let starts = [purchase.completionTimeMillis ?? purchase.purchaseTimeMillis] + purchase.renewalTimesMillis
        let created = index == 0 ? purchase.purchaseTimeMillis : starts[index]
        let periodEnd = index + 1 < starts.count ? starts[index + 1] : purchase.expiryTimeMillis
        let units = purchase.kind == .oneTime ? purchase.quantity : 1
        func money(_ count: Int) -> PlayAPIResources.Money {
            .init(micros: purchase.priceMicros * Int64(count), currency: purchase.currency)
        }
        let voids = play.voids.filter { $0.purchaseToken == purchase.purchaseToken && $0.orderId == orderId }
        var history = Order.OrderHistory()
        var events = [created]
        if let completed = purchase.completionTimeMillis {
            let processed = index == 0 ? completed : starts[index]
            history.processedEvent = .init(eventTime: PlayAPIResources.timestamp(processed))
            events.append(processed)
        }
        if purchase.pendingCanceled {
            history.cancellationEvent = .init(eventTime: PlayAPIResources.timestamp(created))
        }
        var partials: [Order.PartialRefundEvent] = []
        for record in voids {
            let time = PlayAPIResources.timestamp(record.voidedTimeMillis)
            let refunded = money(record.voidedQuantity ?? units)
            let details = Order.RefundDetails(total: refunded, tax: money(0))
            events.append(record.voidedTimeMillis)
            if record.partial {
                partials.append(
                    .init(createTime: time, processTime: time, state: "PROCESSED_SUCCESSFULLY", refundDetails: details))
            } else {
                history.refundEvent = .init(
                    eventTime: time, refundReason: record.voidedReason == 7 ? "CHARGEBACK" : "OTHER",
                    refundDetails: details)
            }
        }
        history.partialRefundEvents = partials.isEmpty ? nil : partials
        let state: String =
            if purchase.pendingCanceled {
                "CANCELED"
            } else if purchase.pending {
                "PENDING"
            } else if history.refundEvent != nil {
                "REFUNDED"
            } else if !partials.isEmpty {
                "PARTIALLY_REFUNDED"
            } else {
                "PROCESSED"
            }
        let order = Order(
            lineItems: [
                .init(
                    productId: purchase.productId, productTitle: purchase.productId, total: money(units),
                    tax: money(0), listingPrice: money(1),
                    oneTimePurchaseDetails: purchase.kind == .oneTime ? .init(quantity: purchase.quantity) : nil,
                    subscriptionDetails: purchase.kind == .subscription
                        ? .init(
                            basePlanId: "monthly", servicePeriodStartTime: PlayAPIResources.timestamp(starts[index]),
                            servicePeriodEndTime: periodEnd.map(PlayAPIResources.timestamp))
                        : nil)
            ],
            orderId: orderId, purchaseToken: purchase.purchaseToken, state: state,
            createTime: PlayAPIResources.timestamp(created),
            lastEventTime: PlayAPIResources.timestamp(events.max() ?? created),
            buyerAddress: .init(buyerCountry: purchase.regionCode), total: money(units), tax: money(0),
            orderDetails: .init(taxInclusive: true), orderHistory: history)
        return Self.googleJSON(order)
    }

    /// `purchases.products.acknowledge` and `purchases.subscriptions.acknowledge`: an empty 204, or
    /// 400 `invalidPurchaseState` (acknowledged already, or not paid) or `productNotOwnedByUser`
    /// (voided).
    func playAcknowledge(package: String, productId: String, token: String, kind: PlaySimulatedPurchase.Kind)
        -> Response
    {
        enum Outcome {
            case done, notFound, wrongProduct
            case refused(String)
        }
        let outcome = play.store.withLock { inner -> Outcome in
            guard var purchase = inner.purchases[token], purchase.packageName == package, purchase.kind == kind else {
                return .notFound
            }
            guard purchase.productId == productId else { return .wrongProduct }
            if let refusal = PlaySimulator.acknowledgementRefusal(purchase) { return .refused(refusal.description) }
            purchase.acknowledged = true
            inner.purchases[token] = purchase
            return .done
        }
        switch outcome {
        case .done:
            return Response(status: .noContent)
        case .notFound:
            return Self.tokenNotFound
        case .wrongProduct:
            return Self.playError(
                .badRequest, reason: "invalid", domain: "global", status: "INVALID_ARGUMENT",
                message: "The product ID does not match the purchase token.")
        case .refused(let reason):
            let message =
                reason == "productNotOwnedByUser"
                ? "The product purchase is not owned by the user."
                : "The purchase is not in a valid state to perform the desired operation."
            return Self.playError(
                .badRequest, reason: reason, status: "INVALID_ARGUMENT", message: message, location: "token",
                locationType: "parameter")
        }
    }

    // MARK: - JSON

    /// Google's error body: `{"error": {"code", "message", "errors": [{"message", "domain",
    /// "reason", …}], "status"}}`.
    static func playError(
        _ code: HTTPResponse.Status, reason: String, domain: String = "androidpublisher", status: String,
        message: String, location: String? = nil, locationType: String? = nil
    ) -> Response {
        var detail: [String: any Sendable] = ["message": message, "domain": domain, "reason": reason]
        detail["location"] = location
        detail["locationType"] = locationType
        let body: [String: any Sendable] = [
            "error": ["code": Int(code.code), "message": message, "errors": [detail], "status": status]
                as [String: any Sendable]
        ]
        var response = json(body, status: code)
        response.headers[.contentType] = "application/json; charset=UTF-8"
        return response
    }

    /// A resource as Google writes it: unset fields left out, slashes as they are.
    static func googleJSON(_ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=UTF-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// The window and position of a `voidedpurchases` page, carried in its `nextPageToken`.
struct PlayVoidPage: Equatable {
    var start: Int64
    var end: Int64
    var type: Int
    var partial: Bool
    var offset: Int

    init(start: Int64, end: Int64, type: Int, partial: Bool, offset: Int) {
        self.start = start
        self.end = end
        self.type = type
        self.partial = partial
        self.offset = offset
    }

    init?(token: String) {
        guard let data = JWSBase64URL.decode(token), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":").map(String.init)
        guard parts.count == 6, parts[0] == "v1", let start = Int64(parts[1]), let end = Int64(parts[2]),
            let type = Int(parts[3]), let offset = Int(parts[5]), offset >= 0
        else { return nil }
        self.init(start: start, end: end, type: type, partial: parts[4] == "1", offset: offset)
    }

    var token: String { JWSBase64URL.encode(Data("v1:\(start):\(end):\(type):\(partial ? 1 : 0):\(offset)".utf8)) }
}
