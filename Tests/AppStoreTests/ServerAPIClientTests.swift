import AppStoreSimulator
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import Testing

@testable import AppStore

/// The Server API client against the simulator in this process: paging, environments, retries,
/// rate limits, credentials and verification of what comes back.
@Suite struct ServerAPIClientTests {
    @Test func historyPagesThroughACustomersWholeHistoryAndARefundWhilePagingWins() async throws {
        // Each answer waits 150 ms before its page is read, so a refund made as soon as page 1
        // is answered lands before page 2 is read.
        try await withAPISimulator(faults: SimulatorFaults(latencyMilliseconds: 150)) { sim in
            let created = try sim.createHistory(customer: "alice", count: 45, refunded: [10, 30])
            try sim.createHistory(customer: "bob", count: 3)
            let victim = created[4]

            async let history = sim.withAPIClient { client in
                try await client.transactionHistory(for: created[0].transactionId, logger: silentLogger)
            }
            while sim.simulator.state.stats.serverAPIAnswers["200", default: 0] < 1 {
                try await Task.sleep(for: .milliseconds(2))
            }
            _ = try sim.simulator.refundTransaction(victim.transactionId, reason: .appIssue)

            let result = try #require(try await history.value)
            #expect(result.environment == .production)
            #expect(result.pages == 3)
            // Page 3 holds the refunded transaction again, signed later.
            #expect(result.received == 46)
            #expect(result.rejected.isEmpty)
            #expect(result.transactions.count == 45)
            #expect(Set(result.transactions.compactMap(\.transactionId)) == Set(created.map(\.transactionId)))
            let refunded = result.transactions.filter { $0.revocationDate != nil }.compactMap(\.transactionId)
            #expect(Set(refunded) == [created[10].transactionId, created[30].transactionId, victim.transactionId])
            let revoked = try #require(result.transactions.first { $0.transactionId == victim.transactionId })
            #expect(revoked.revocationReason == .appIssue)
            #expect(
                result.transactions.map(\.purchaseDate) == result.transactions.map(\.purchaseDate).sorted { $0! < $1! })
            let stats = try await SimulatorAdmin.stats(sim)
            #expect(stats.serverAPIRequestsByEndpoint == ["production": 3])
        }
    }

    @Test func dateFiltersAreRepeatedOnEveryPage() async throws {
        try await withAPISimulator(pageSize: 10) { sim in
            let start = Date(timeIntervalSince1970: 1_760_000_000)
            let created = try sim.createHistory(customer: "carol", count: 40, start: start)
            let query = AppStoreServerAPIClient.HistoryQuery(
                startDate: start.addingTimeInterval(10), endDate: start.addingTimeInterval(35))
            let result = try #require(
                try await sim.withAPIClient { client in
                    try await client.transactionHistory(
                        for: created[0].transactionId, query: query, logger: silentLogger)
                }.value)
            // 25 purchases in the window: three pages of ten; a page without the filters would add others.
            #expect(result.pages == 3)
            #expect(result.transactions.compactMap(\.transactionId) == created[10..<35].map(\.transactionId))
        }
    }

    @Test func refundHistoryAndOrderLookupReturnVerifiedTransactions() async throws {
        try await withAPISimulator(pageSize: 2) { sim in
            let created = try sim.createHistory(customer: "dave", count: 8, refunded: [1, 3, 5])
            try await sim.withAPIClient { client in
                let refunds = try #require(
                    try await client.refundHistory(for: created[0].transactionId, logger: silentLogger).value)
                #expect(refunds.pages == 2)
                #expect(
                    refunds.transactions.compactMap(\.transactionId) == [1, 3, 5].map { created[$0].transactionId })

                let order = try #require(try await client.lookUpOrder(created[2].orderId, logger: silentLogger).value)
                #expect(order.transactions.compactMap(\.transactionId) == [created[2].transactionId])
                let unknown = try await client.lookUpOrder("MNOTANORDER", logger: silentLogger)
                #expect(unknown == .notFound)
            }
        }
    }

    @Test func aSandboxTransactionIsFoundInTheSandboxAfter4040010() async throws {
        try await withAPISimulator { sim in
            let sandbox = try sim.simulator.createTransaction(
                SimulatedTransaction(productId: "coins_100", environment: .sandbox))
            let outcome = try await sim.withAPIClient { client in
                try await client.transactionInfo(for: sandbox.transactionId, logger: silentLogger)
            }
            let transaction = try #require(outcome.value)
            #expect(transaction.transactionId == sandbox.transactionId)
            #expect(transaction.environment == .sandbox)
            let stats = try await SimulatorAdmin.stats(sim)
            #expect(stats.serverAPIRequestsByEndpoint == ["production": 1, "sandbox": 1])
            #expect(stats.serverAPIAnswers == ["4040010": 1, "200": 1])
        }
    }

    @Test func aTransactionUnknownInBothEnvironmentsIsNotFound() async throws {
        try await withAPISimulator { sim in
            try await sim.withAPIClient { client in
                #expect(try await client.transactionInfo(for: "2000000999999999", logger: silentLogger) == .notFound)
                let history = try await client.transactionHistory(for: "2000000999999999", logger: silentLogger)
                #expect(history == .notFound)
                // Not a transaction id at all: Apple refuses the request (4000006), no environment hunt.
                let invalid = try await client.transactionInfo(for: "abc", logger: silentLogger)
                #expect(invalid == .rejected(errorCode: 4_000_006, reason: "HTTP 400 4000006: Invalid transaction id."))
            }
        }
    }

    @Test(arguments: [4_040_002, 4_040_004, 4_040_006, 5_000_001])
    func retryableErrorCodesAreRetriedThenLeftForLater(code: Int) async throws {
        try await withAPISimulator(faults: SimulatorFaults(apiErrorCode: code)) { sim in
            let created = try sim.createHistory(customer: "erin", count: 1)
            let outcome = try await sim.withAPIClient { client in
                try await client.transactionInfo(for: created[0].transactionId, logger: silentLogger)
            }
            guard case .retryLater(_, _, let errorCode) = outcome else {
                Issue.record("expected retryLater, got \(outcome)")
                return
            }
            #expect(errorCode == code)
            #expect(try await SimulatorAdmin.stats(sim).serverAPIRequests == 3)
        }
    }

    @Test func http503IsRetriedAndAnAnswerAfterTwoFailuresIsUsed() async throws {
        try await withAPISimulator(faults: SimulatorFaults(http503Share: 1, remainingRequests: 2)) { sim in
            let created = try sim.createHistory(customer: "frank", count: 1)
            let outcome = try await sim.withAPIClient { client in
                try await client.transactionInfo(for: created[0].transactionId, logger: silentLogger)
            }
            #expect(outcome.value?.transactionId == created[0].transactionId)
            #expect(try await SimulatorAdmin.stats(sim).serverAPIAnswers == ["http_503": 2, "200": 1])
        }
        try await withAPISimulator(faults: SimulatorFaults(http503Share: 1)) { sim in
            let outcome = try await sim.withAPIClient { client in
                try await client.transactionInfo(for: "2000000000000001", logger: silentLogger)
            }
            guard case .retryLater(_, let status, _) = outcome else {
                Issue.record("expected retryLater, got \(outcome)")
                return
            }
            #expect(status == 503)
        }
    }

    @Test func aMalformedAnswerIsRetried() async throws {
        try await withAPISimulator(faults: SimulatorFaults(malformedShare: 1, remainingRequests: 1)) { sim in
            let created = try sim.createHistory(customer: "fay", count: 1)
            let outcome = try await sim.withAPIClient { client in
                try await client.transactionHistory(for: created[0].transactionId, logger: silentLogger)
            }
            #expect(outcome.value?.transactions.count == 1)
            let answers = try await SimulatorAdmin.stats(sim).serverAPIAnswers
            #expect(answers == ["malformed": 1, "200": 1])
        }
    }

    @Test func aServerThatIsNotThereIsLeftForLater() async throws {
        try await withAPISimulator { sim in
            var configuration = sim.apiConfiguration(maxAttempts: 2)
            // Port 9 (discard) on loopback: nothing listens there.
            configuration.productionURL = "http://127.0.0.1:9"
            let outcome = try await sim.withAPIClient(configuration) { client in
                try await client.transactionInfo(for: "2000000000000001", logger: silentLogger)
            }
            guard case .retryLater(let reason, nil, nil) = outcome else {
                Issue.record("expected retryLater, got \(outcome)")
                return
            }
            #expect(reason.contains("connection error"))
        }
    }

    @Test func aHangingServerTimesOutAndIsLeftForLater() async throws {
        try await withAPISimulator(faults: SimulatorFaults(hangShare: 1, hangMilliseconds: 5_000)) { sim in
            var configuration = sim.apiConfiguration(maxAttempts: 2)
            configuration.requestTimeout = .milliseconds(200)
            let outcome = try await sim.withAPIClient(configuration) { client in
                try await client.transactionInfo(for: "2000000000000001", logger: silentLogger)
            }
            guard case .retryLater(let reason, nil, nil) = outcome else {
                Issue.record("expected retryLater, got \(outcome)")
                return
            }
            #expect(reason.contains("timed out"))
        }
    }

    /// A `200` head announcing 4,096 bytes, one byte, then nothing: one deadline over head and
    /// body gives up on each try (a deadline on the head alone waited out the 60 s stall).
    @Test func anAnswerThatStallsAfterItsHeadTimesOutAndIsLeftForLater() async throws {
        try await withAPISimulator(faults: SimulatorFaults(hangMilliseconds: 60_000, stalledBodyShare: 1)) { sim in
            var configuration = sim.apiConfiguration(maxAttempts: 2)
            configuration.requestTimeout = .seconds(1)
            let started = ContinuousClock.now
            let outcome = try await sim.withAPIClient(configuration) { client in
                try await client.transactionInfo(for: "2000000000000001", logger: silentLogger)
            }
            let elapsed = ContinuousClock.now - started
            guard case .retryLater(let reason, nil, nil) = outcome else {
                Issue.record("expected retryLater, got \(outcome)")
                return
            }
            #expect(reason.contains("timed out"), "\(reason)")
            #expect(reason.contains("after 2 attempts"), "\(reason)")
            #expect(elapsed < .seconds(20), "two 1 s deadlines, not two 60 s stalls")
        }
    }

    @Test func http429WaitsUntilRetryAfter() async throws {
        let faults = SimulatorFaults(remainingRequests: 1, http429Share: 1, retryAfterMilliseconds: 400)
        try await withAPISimulator(faults: faults) { sim in
            let created = try sim.createHistory(customer: "gina", count: 1)
            let outcome = try await sim.withAPIClient { client in
                try await client.transactionInfo(for: created[0].transactionId, logger: silentLogger)
            }
            #expect(outcome.value?.transactionId == created[0].transactionId)
            let arrivals = sim.simulator.state.serverAPIArrivals
            try #require(arrivals.count == 2)
            // The backoff of these tests is at most 20 ms: only Retry-After explains the wait.
            #expect(arrivals[1] - arrivals[0] >= .milliseconds(350))
            #expect(try await SimulatorAdmin.stats(sim).serverAPIAnswers == ["http_429": 1, "200": 1])
        }
    }

    @Test func retryAfterIsReadAsEpochMilliseconds() {
        let now = Date(timeIntervalSince1970: 1_763_000_000)
        #expect(AppStoreServerAPIClient.retryAfterWait("1763000001500", now: now) == .milliseconds(1_500))
        #expect(AppStoreServerAPIClient.retryAfterWait("1762999999000", now: now) == .zero)
        #expect(AppStoreServerAPIClient.retryAfterWait("3", now: now) == .seconds(3))
        #expect(AppStoreServerAPIClient.retryAfterWait("soon", now: now) == nil)
    }

    @Test func aWrongKeyIsAConfigurationError() async throws {
        try await withAPISimulator { sim in
            let impostor = ServerAPIKey(
                keyID: sim.simulator.apiKey.keyID, issuerID: sim.simulator.apiKey.issuerID,
                bundleID: AppStoreSimulator.defaultBundleID, privateKey: P256.Signing.PrivateKey())
            await #expect(throws: ServerAPIConfigurationError.self) {
                try await sim.withAPIClient(sim.apiConfiguration(key: impostor)) { client in
                    try await client.transactionInfo(for: "2000000000000001", logger: silentLogger)
                }
            }
            // Not retried: one request.
            let answers = try await SimulatorAdmin.stats(sim).serverAPIAnswers
            #expect(answers == ["401": 1])
        }
    }

    @Test func aBundleTheKeyIsNotForIsAConfigurationError() async throws {
        try await withAPISimulator(apiBundleIDs: [AppStoreSimulator.defaultBundleID]) { sim in
            let other = sim.simulator.apiKey.serverAPIKey(bundleID: "com.example.other")
            await #expect(throws: ServerAPIConfigurationError.self) {
                try await sim.withAPIClient(sim.apiConfiguration(key: other)) { client in
                    try await client.transactionHistory(for: "2000000000000001", logger: silentLogger)
                }
            }
        }
    }

    @Test func expiredTokensWrongAudiencesAndWrongKeysGetAPlainText401() async throws {
        try await withAPISimulator { sim in
            let created = try sim.createHistory(customer: "hank", count: 1)
            let key = try P256.Signing.PrivateKey(pemRepresentation: sim.simulator.apiKey.privateKeyPEM)
            let kid = sim.simulator.apiKey.keyID
            let iss = sim.simulator.apiKey.issuerID
            let now = Date()
            func status(_ token: String) async throws -> (Int, String) {
                var request = HTTPClientRequest(
                    url: sim.serverAPIURL + "/inApps/v1/transactions/\(created[0].transactionId)")
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(5))
                let body = try await response.body.collect(upTo: 1 << 20)
                return (Int(response.status.code), String(buffer: body))
            }
            #expect(try await status(TestJWT.make(key: key, kid: kid, iss: iss, iat: now)).0 == 200)
            let refused = [
                try TestJWT.make(key: key, kid: kid, iss: iss, iat: now.addingTimeInterval(-600)),  // expired
                try TestJWT.make(key: key, kid: kid, iss: iss, iat: now, aud: "appstoreconnect-v2"),
                try TestJWT.make(key: P256.Signing.PrivateKey(), kid: kid, iss: iss, iat: now),
                try TestJWT.make(key: key, kid: "OTHERKEY", iss: iss, iat: now),
                try TestJWT.make(key: key, kid: kid, iss: "someone-else", iat: now),
                try TestJWT.make(key: key, kid: kid, iss: iss, iat: now, lifetime: 7200),
            ]
            for token in refused {
                let (code, body) = try await status(token)
                #expect(code == 401)
                #expect((try? JSONSerialization.jsonObject(with: Data(body.utf8))) == nil)
            }
        }
    }

    @Test func pacingBoundsTheRequestRate() async throws {
        try await withAPISimulator { sim in
            let created = try sim.createHistory(customer: "ivy", count: 1)
            let started = ContinuousClock.now
            try await sim.withAPIClient(sim.apiConfiguration(rate: 20)) { client in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<16 {
                        group.addTask {
                            _ = try await client.transactionInfo(for: created[0].transactionId, logger: silentLogger)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            // At 20/s, by any moment t after the start at most 1 + 20·t requests can have arrived:
            // the n-th (from 0) arrives no sooner than n × 50 ms. A busy machine only delays
            // arrivals, so this upper bound holds however loaded the test run is; an unpaced client
            // would have all 16 there within a few milliseconds.
            let arrivals = sim.simulator.state.serverAPIArrivals.sorted()
            try #require(arrivals.count == 16)
            for (index, arrival) in arrivals.enumerated() {
                #expect(arrival - started >= .milliseconds(50 * index), "request \(index) arrived too early")
            }
        }
    }

    @Test func aSimulatorJWSVerifiesAgainstTheSimulatorRootOnly() async throws {
        try await withAPISimulator { sim in
            let token = UUID()
            let created = try sim.simulator.createTransaction(
                SimulatedTransaction(
                    productId: "vip_month", customer: "jo", type: .autoRenewable, quantity: 1,
                    purchaseDate: Date(timeIntervalSince1970: 1_762_000_000), appAccountToken: token, price: 4990,
                    currency: "EUR"))
            let parts = created.signedTransaction.split(separator: ".")
            let headerData = try #require(TestJWT.decode(parts[0]))
            let header = try #require(try JSONSerialization.jsonObject(with: headerData) as? [String: Any])
            #expect(header["alg"] as? String == "ES256")
            #expect((header["x5c"] as? [String])?.count == 3)

            let transaction = try #require(await sim.verifier.verifyTransaction(created.signedTransaction).payload)
            #expect(transaction.transactionId == created.transactionId)
            #expect(transaction.type == .autoRenewable)
            #expect(transaction.appAccountToken == token)
            #expect(transaction.price == 4990)
            #expect(transaction.currency == "EUR")
            #expect(transaction.purchaseDate == Date(timeIntervalSince1970: 1_762_000_000))
            #expect(transaction.environment == .production)

            let apple = SignedDataVerifier(configuration: .init(bundleIds: [AppStoreSimulator.defaultBundleID]))
            guard case .invalid(.untrustedChain) = await apple.verifyTransaction(created.signedTransaction) else {
                Issue.record("a simulator JWS must not verify against Apple's roots")
                return
            }
        }
    }

    @Test func forgedSignedTransactionsAreReportedNeverTrusted() async throws {
        try await withAPISimulator(faults: SimulatorFaults(forgedJWSShare: 1)) { sim in
            let created = try sim.createHistory(customer: "kim", count: 3)
            try await sim.withAPIClient { client in
                let info = try await client.transactionInfo(for: created[0].transactionId, logger: silentLogger)
                #expect(info == .unverifiable(.invalidSignature))
                let history = try #require(
                    try await client.transactionHistory(for: created[0].transactionId, logger: silentLogger).value)
                #expect(history.transactions.isEmpty)
                #expect(history.rejected.map(\.failure) == Array(repeating: .invalidSignature, count: 3))
            }
        }
        // A server signing with a CA the client does not trust.
        try await withAPISimulator { sim in
            let created = try sim.createHistory(customer: "lee", count: 1)
            let stranger = try SimulatorCA.generate()
            let verifier = SignedDataVerifier(
                configuration: .init(
                    trustedRoots: TrustedRoots([stranger.root]), bundleIds: [AppStoreSimulator.defaultBundleID]))
            let info = try await sim.withAPIClient(verifier: verifier) { client in
                try await client.transactionInfo(for: created[0].transactionId, logger: silentLogger)
            }
            guard case .unverifiable(.untrustedChain) = info else {
                Issue.record("expected an untrusted chain, got \(info)")
                return
            }
        }
    }

    @Test func theSimulatorSignsNotificationsThatVerifyWithTheirTransaction() async throws {
        try await withAPISimulator { sim in
            let created = try sim.createHistory(customer: "max", count: 1)
            _ = try sim.simulator.refundTransaction(created[0].transactionId)
            let answer = try await SimulatorAdmin.send(
                sim, "POST", "/sim/notifications",
                #"{"notificationType":"REFUND","transactionId":"\#(created[0].transactionId)"}"#)
            #expect(answer.status == 200)
            let body = String(decoding: answer.body, as: UTF8.self)
            let notification = try #require(await sim.verifier.verifyNotificationBody(body).payload)
            #expect(notification.payload.notificationType == .refund)
            #expect(notification.payload.data?.appAppleId == 1_234_567_890)
            #expect(notification.transaction?.transactionId == created[0].transactionId)
            #expect(notification.transaction?.revocationDate != nil)
            let second = try sim.simulator.signNotification(type: .refund, transactionId: created[0].transactionId)
            let again = try #require(await sim.verifier.verifyNotification(second.signedPayload).payload)
            #expect(again.notificationUUID != nil)
            #expect(again.notificationUUID != notification.notificationUUID)
        }
    }

    @Test func adminEndpointsCreateRefundAndReverse() async throws {
        try await withAPISimulator { sim in
            let create = try await SimulatorAdmin.send(
                sim, "POST", "/sim/transactions",
                #"{"productId":"coins_100","customer":"ned","environment":"Sandbox","type":"Consumable","quantity":3,"#
                    + #""purchaseDate":1762000000000,"appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","#
                    + #""price":990,"currency":"USD"}"#
            )
            #expect(create.status == 200)
            let created = try JSONDecoder().decode(CreatedTransaction.self, from: create.body)
            let verified = try #require(await sim.verifier.verifyTransaction(created.signedTransaction).payload)
            #expect(verified.quantity == 3)
            #expect(verified.environment == .sandbox)

            let refund = try await SimulatorAdmin.send(
                sim, "POST", "/sim/transactions/\(created.transactionId)/refund", #"{"revocationReason":1}"#)
            let refunded = try JSONDecoder().decode(CreatedTransaction.self, from: refund.body)
            let revoked = try #require(await sim.verifier.verifyTransaction(refunded.signedTransaction).payload)
            #expect(revoked.revocationReason == .appIssue)
            #expect(revoked.revocationDate != nil)

            let reverse = try await SimulatorAdmin.send(
                sim, "POST", "/sim/transactions/\(created.transactionId)/reverse", nil)
            let reversed = try JSONDecoder().decode(CreatedTransaction.self, from: reverse.body)
            let restored = try #require(await sim.verifier.verifyTransaction(reversed.signedTransaction).payload)
            #expect(restored.revocationDate == nil)
            let before = try #require(revoked.signedDate)
            #expect(try #require(restored.signedDate) > before)

            #expect(try await SimulatorAdmin.send(sim, "POST", "/sim/transactions/1/refund", nil).status == 404)
        }
    }
}
