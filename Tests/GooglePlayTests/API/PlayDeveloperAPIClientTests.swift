import Foundation
import GooglePlay
import Synchronization
import Testing

@Suite struct PlayDeveloperAPIClientTests {
    static let package = "com.example.app"

    func product(_ client: PlayDeveloperAPIClient) async throws -> PlayAPIOutcome<ProductPurchaseV2> {
        try await client.productPurchase(packageName: Self.package, token: "tok-1", logger: quietLogger)
    }

    @Test func aProductPurchaseIsReadLeniently() async throws {
        let google = ScriptedGoogle()
        google.script(PlayPaths.product, [.json(PlayPaths.productBody)])
        try await withPlayClient(google) { client in
            let purchase = try #require(try await product(client).value)
            #expect(purchase.orderId == "GPA.1234-5678-9012-34567")
            #expect(purchase.isPurchased && !purchase.isPending)
            #expect(purchase.isAcknowledged)
            #expect(purchase.isTestPurchase)
            #expect(purchase.quantity == 3)
            #expect(purchase.refundedQuantity == 2)
            #expect(purchase.productLineItem?.first?.productOfferDetails?.consumptionState == "CONSUMPTION_STATE_CONSUMED")
            #expect(purchase.obfuscatedExternalAccountId == "a1b2")
            #expect(abs((purchase.completionDate?.timeIntervalSince1970 ?? 0) - 1_767_225_600.123) < 0.001)
        }
        let request = try #require(google.requests(to: PlayPaths.product).first)
        #expect(request.method == "GET")
    }

    @Test func aSubscriptionAndAnOrderAreRead() async throws {
        let google = ScriptedGoogle()
        google.script(PlayPaths.subscription, [.json(#"""
            {"kind":"androidpublisher#subscriptionPurchaseV2","startTime":"2026-01-01T00:00:00Z","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","latestOrderId":"GPA.old","linkedPurchaseToken":"tok-0","acknowledgementState":"ACKNOWLEDGEMENT_STATE_PENDING","externalAccountIdentifiers":{"obfuscatedExternalAccountId":"a1b2"},"testPurchase":{},"lineItems":[{"productId":"monthly","expiryTime":"2026-02-01T00:00:00.5Z","latestSuccessfulOrderId":"GPA.1234-5678-9012-34567..1","autoRenewingPlan":{"autoRenewEnabled":true}}]}
            """#)])
        google.script(PlayPaths.order, [.json(#"""
            {"orderId":"GPA.1234-5678-9012-34567","purchaseToken":"tok-1","state":"PARTIALLY_REFUNDED","createTime":"2026-01-01T00:00:00Z","lineItems":[{"productId":"gems_100","productTitle":"100 gems","total":{"currencyCode":"EUR","units":"2","nanos":990000000},"oneTimePurchaseDetails":{"quantity":3}}],"total":{"currencyCode":"EUR","units":"2","nanos":990000000},"orderHistory":{"partialRefundEvents":[{"createTime":"2026-01-02T00:00:00Z","processTime":"2026-01-03T00:00:00Z","state":"PROCESSED_SUCCESSFULLY","refundDetails":{"total":{"currencyCode":"EUR","units":"0","nanos":990000000}}}]}}
            """#)])
        try await withPlayClient(google) { client in
            let subscription = try #require(
                try await client.subscriptionPurchase(packageName: Self.package, token: "tok-1", logger: quietLogger).value)
            #expect(subscription.subscriptionState == "SUBSCRIPTION_STATE_ACTIVE")
            #expect(subscription.latestSuccessfulOrderId == "GPA.1234-5678-9012-34567..1")
            #expect(subscription.linkedPurchaseToken == "tok-0")
            #expect(!subscription.isAcknowledged)
            #expect(subscription.isTestPurchase)
            #expect(subscription.obfuscatedExternalAccountId == "a1b2")
            #expect(subscription.lineItems?.first?.autoRenewEnabled == true)
            #expect(subscription.lineItems?.first?.expiryDate != nil)

            let order = try #require(
                try await client.order(packageName: Self.package, orderID: "GPA.1234-5678-9012-34567", logger: quietLogger).value)
            #expect(order.purchaseToken == "tok-1")
            #expect(order.state == "PARTIALLY_REFUNDED")
            #expect(order.lineItems.first?.quantity == 3)
            #expect(order.total?.amount == Decimal(string: "2.99"))
            #expect(order.refunds.count == 1 && order.refunds[0].isPartial)
            #expect(order.refunds[0].total?.amount == Decimal(string: "0.99"))
            #expect(!order.isRefunded)
        }
    }

    @Test func aServerErrorIsRetriedUntilItAnswers() async throws {
        for failure in [ScriptedGoogle.Reply.error(500, reason: "backendError"), .error(503, reason: "backendError"),
            .error(409, reason: "concurrentUpdate")]
        {
            let google = ScriptedGoogle()
            google.script(PlayPaths.product, [failure, .json(PlayPaths.productBody)])
            try await withPlayClient(google) { client in
                let outcome = try await product(client)
                #expect(outcome.value != nil, "\(failure.status)")
            }
            #expect(google.requests(to: PlayPaths.product).count == 2)
        }
    }

    @Test func aServerThatKeepsFailingIsRetryLaterAfterTheBudget() async throws {
        let google = ScriptedGoogle()
        google.script(PlayPaths.product, [.error(500, reason: "backendError")])
        try await withPlayClient(google, maxAttempts: 3) { client in
            guard case .retryLater(let reason, let status) = try await product(client) else {
                Issue.record("not retryLater"); return
            }
            #expect(status == 500)
            #expect(reason.contains("after 3 attempts"))
            #expect(!reason.contains("tok-1"))
        }
        #expect(google.requests(to: PlayPaths.product).count == 3)
    }

    @Test func anAnswerThatComesTooLateIsRetriedThenRetryLater() async throws {
        let google = ScriptedGoogle()
        var slow = ScriptedGoogle.Reply.json(PlayPaths.productBody)
        slow.delay = .seconds(3)
        google.script(PlayPaths.product, [slow])
        try await withPlayClient(google, requestTimeout: .milliseconds(300), maxAttempts: 2) { client in
            guard case .retryLater(let reason, _) = try await product(client) else { Issue.record("not retryLater"); return }
            #expect(reason.contains("timed out"))
        }
    }

    @Test func rateLimitingWaitsItsRetryAfter() async throws {
        let google = ScriptedGoogle()
        var limited = ScriptedGoogle.Reply.error(429, reason: "rateLimitExceeded", statusText: "RESOURCE_EXHAUSTED")
        limited.headers = ["Retry-After": "1"]
        google.script(PlayPaths.product, [limited, .json(PlayPaths.productBody)])
        try await withPlayClient(google) { client in
            let started = ContinuousClock.now
            let outcome = try await product(client)
            #expect(outcome.value != nil)
            // A lower bound only: a loaded machine is slower, never faster.
            #expect(ContinuousClock.now - started >= .milliseconds(950))
        }
        #expect(google.requests(to: PlayPaths.product).count == 2)
    }

    @Test(arguments: [
        ScriptedGoogle.Reply(status: 401, body: ""),
        ScriptedGoogle.Reply.error(401, reason: "permissionDenied", statusText: "UNAUTHENTICATED"),
        ScriptedGoogle.Reply.error(403, reason: "permissionDenied", statusText: "PERMISSION_DENIED"),
    ])
    func refusedCredentialsStopTheRunWithAClearMessage(reply: ScriptedGoogle.Reply) async throws {
        let google = ScriptedGoogle()
        google.script(PlayPaths.product, [reply])
        try await withPlayClient(google) { client in
            do {
                _ = try await product(client)
                Issue.record("HTTP \(reply.status) did not throw")
            } catch let error as PlayAPIConfigurationError {
                #expect(error.endpoint == .developerAPI)
                #expect(error.httpStatus == reply.status)
                #expect(error.description.contains("lacks access to the app in Play Console"))
                #expect(!error.description.contains("ya29"))
            }
        }
        // Not retried: no retry fixes it.
        #expect(google.requests(to: PlayPaths.product).count == 1)
    }

    @Test func notFoundAndGoneAreOutcomes() async throws {
        let google = ScriptedGoogle()
        google.script(PlayPaths.product, [.error(404, reason: "notFound", statusText: "NOT_FOUND")])
        google.script(PlayPaths.subscription, [.error(410, reason: "purchaseTokenNoLongerValid", statusText: "GONE")])
        try await withPlayClient(google) { client in
            let product = try await product(client)
            let subscription = try await client.subscriptionPurchase(packageName: Self.package, token: "tok-1", logger: quietLogger)
            #expect(product == .notFound)
            #expect(subscription == .gone)
        }
    }

    @Test func pacingNeverExceedsTheRate() async throws {
        let google = ScriptedGoogle()
        google.script(PlayPaths.product, [.json(PlayPaths.productBody)])
        let started = ContinuousClock.now
        try await withPlayClient(google, rate: 20) { client in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<30 { group.addTask { try await product(client).value != nil } }
                for try await found in group { #expect(found) }
            }
            // 30 requests at 20 a second, one at once: the last may leave 29/20 s after the first.
            // A lower bound only, which load cannot break.
            #expect(ContinuousClock.now - started >= .milliseconds(1400))
        }
        let arrivals = google.requests(to: PlayPaths.product).map(\.arrival)
        #expect(arrivals.count == 30)
        // The pacer sends the n-th request no sooner than (n − 1)/20 s after the start, and none can
        // arrive before it is sent: a bound a loaded machine cannot break (it only delays requests;
        // the arrivals of a delayed server may bunch, which says nothing of the pace they were sent at).
        for (index, arrival) in arrivals.sorted().enumerated() where index > 0 {
            #expect(arrival - started >= .milliseconds(50 * (index - 1)), "request \(index + 1) came early")
        }
    }

    @Test func voidedPurchasesAreWalkedToTheLastPage() async throws {
        let google = ScriptedGoogle()
        google.script(PlayPaths.voided, [
            .json(#"{"voidedPurchases":[{"kind":"androidpublisher#voidedPurchase","purchaseToken":"t1","purchaseTimeMillis":"1767225600000","voidedTimeMillis":"1767312000000","orderId":"GPA.1","voidedSource":0,"voidedReason":1}],"tokenPagination":{"nextPageToken":"page-2"}}"#),
            .json(#"{"voidedPurchases":[{"purchaseToken":"t2","purchaseTimeMillis":1767225600000,"voidedTimeMillis":1767312000000,"orderId":"GPA.2..0","voidedSource":2,"voidedReason":8},{"purchaseToken":"t3","orderId":"GPA.3","voidedSource":1,"voidedReason":0,"voidedQuantity":2}],"tokenPagination":{"nextPageToken":"page 3/x"}}"#),
            .json(#"{}"#),
        ])
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        try await withPlayClient(google) { client in
            let seen = Mutex<[VoidedPurchase]>([])
            let outcome = try await client.allVoidedPurchases(
                packageName: Self.package, query: .init(startTime: start, endTime: start.addingTimeInterval(86_400)),
                logger: quietLogger
            ) { page in seen.withLock { $0 += page } }
            #expect(outcome == .found(3))
            let voids = seen.withLock { $0 }
            #expect(voids.map(\.orderId) == ["GPA.1", "GPA.2..0", "GPA.3"])
            #expect(voids[0].voidedTimeMillis == 1_767_312_000_000)
            #expect(voids[1].purchaseTimeMillis == 1_767_225_600_000)
            #expect(voids[1].voidedReason == .unacknowledgedPurchase && voids[1].voidedSource == .google)
            #expect(voids[2].voidedQuantity == 2 && voids[2].voidedSource == .developer)
        }
        let requests = google.requests(to: PlayPaths.voided)
        #expect(requests.map { $0.query["token"] } == [nil, "page-2", "page 3/x"])
        for request in requests {
            #expect(request.query["type"] == "1")
            #expect(request.query["includeQuantityBasedPartialRefund"] == "true")
            #expect(request.query["startTime"] == "1767225600000")
            #expect(request.query["endTime"] == "1767312000000")
            #expect(request.query["maxResults"] == "1000")
        }
    }

    @Test func aPagerThatRepeatsItselfIsRetryLater() async throws {
        let google = ScriptedGoogle()
        google.script(PlayPaths.voided, [.json(#"{"voidedPurchases":[],"tokenPagination":{"nextPageToken":"again"}}"#)])
        try await withPlayClient(google) { client in
            let outcome = try await client.allVoidedPurchases(packageName: Self.package, query: .init(), logger: quietLogger) { _ in }
            guard case .retryLater = outcome else { Issue.record("\(outcome)"); return }
        }
        #expect(google.requests(to: PlayPaths.voided).count == 2)
    }

    @Test func acknowledgementsSayWhatGoogleDid() async throws {
        let base = "/androidpublisher/v3/applications/com.example.app/purchases"
        let cases: [(ScriptedGoogle.Reply, PlayAcknowledgeOutcome)] = [
            (ScriptedGoogle.Reply(status: 204, body: ""), .acknowledged),
            (.error(400, reason: "invalidPurchaseState"), .alreadyAcknowledged),
            (.error(400, reason: "productNotOwnedByUser"), .notOwned),
            (.error(404, reason: "notFound", statusText: "NOT_FOUND"), .notFound),
        ]
        for (reply, expected) in cases {
            let google = ScriptedGoogle()
            google.script(base + "/products/gems_100/tokens/tok-1:acknowledge", [reply])
            google.script(base + "/subscriptions/monthly/tokens/tok-1:acknowledge", [reply])
            try await withPlayClient(google) { client in
                let product = try await client.acknowledgeProduct(
                    packageName: Self.package, productID: "gems_100", token: "tok-1", logger: quietLogger)
                let subscription = try await client.acknowledgeSubscription(
                    packageName: Self.package, subscriptionID: "monthly", token: "tok-1", logger: quietLogger)
                #expect(product == expected)
                #expect(subscription == expected)
            }
            #expect(google.requests.filter { $0.path.hasSuffix(":acknowledge") }.map(\.method) == ["POST", "POST"])
        }
    }

    @Test func pathSegmentsArePercentEncoded() async throws {
        let google = ScriptedGoogle()
        try await withPlayClient(google) { client in
            _ = try await client.productPurchase(packageName: Self.package, token: "a/b c?d#e%", logger: quietLogger)
            _ = try await client.order(packageName: Self.package, orderID: "..", logger: quietLogger)
        }
        let paths = google.requests.map(\.path).filter { $0 != "/token" }
        #expect(paths == [
            "/androidpublisher/v3/applications/com.example.app/purchases/productsv2/tokens/a%2Fb%20c%3Fd%23e%25",
            "/androidpublisher/v3/applications/com.example.app/orders/%2E%2E",
        ])
    }
}
