import AppStore
import AppStoreSimulator
import Crypto
import Foundation
import Testing
import _CryptoExtras

/// The simulator plays Google Play (SPEC section 18) over real HTTP: signed purchases, the OAuth
/// token endpoint, the Developer API's answers, voids, acknowledgements, orders, pushes and faults.
/// Serialized: seventeen simulators at once, each signing and answering, weigh on a two-core CI
/// machine where other suites time their stops.
@Suite(.serialized) struct PlaySimulatorTests {
    static let package = "com.example.game"

    /// Creates a purchase through the admin endpoint.
    static func create(_ sim: RunningSimulator, _ json: String) async throws -> [String: Any] {
        try await PlayHTTP.admin(sim, "/sim/play/purchases", json)
    }

    static func verifies(_ purchaseData: String, _ signature: String, key base64: String) throws -> Bool {
        let key = try _RSA.Signing.PublicKey(derRepresentation: Data(base64Encoded: base64) ?? Data())
        guard let bytes = Data(base64Encoded: signature) else { return false }
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: bytes), for: Insecure.SHA1.hash(data: Data(purchaseData.utf8)),
            padding: .insecurePKCS1v1_5)
    }

    // MARK: - Signed purchases

    @Test func aCreatedPurchaseVerifiesWithThePrintedLicenceKeyAndNotOnceReserialised() async throws {
        try await withSimulator { sim in
            let created = try await Self.create(
                sim,
                #"{"productId": "coins_100", "quantity": 3, "obfuscatedAccountId": "a1b2c3", "purchaseTimeMillis": 1764000000000}"#
            )
            let data = try #require(created["purchaseData"] as? String)
            let signature = try #require(created["signature"] as? String)
            let key = try #require(try await sim.playSettings().licenseKeys[Self.package])
            #expect(try Self.verifies(data, signature, key: key))
            // Play's own spelling: compact, in Play Billing's order.
            let orderId = try #require(created["orderId"] as? String)
            let token = try #require(created["purchaseToken"] as? String)
            #expect(
                data
                    == #"{"orderId":"\#(orderId)","packageName":"com.example.game","productId":"coins_100","purchaseTime":1764000000000,"purchaseState":0,"purchaseToken":"\#(token)","obfuscatedAccountId":"a1b2c3","quantity":3,"acknowledged":false}"#
            )
            #expect(orderId.wholeMatch(of: /GPA\.\d{4}-\d{4}-\d{4}-\d{5}/) != nil)
            // The same fields re-serialised (as a server that parses and re-encodes would) do not verify.
            let object = try JSONSerialization.jsonObject(with: Data(data.utf8))
            let reserialised = String(
                decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            #expect(reserialised != data)
            #expect(try !Self.verifies(reserialised, signature, key: key))
        }
    }

    @Test func testPendingSubscriptionAndLicenceTesterPurchasesSayWhatTheyAre() async throws {
        try await withSimulator { sim in
            let test = try await Self.create(sim, #"{"productId": "coins_100", "testPurchase": true}"#)
            #expect((test["purchaseData"] as? String)?.contains(#""purchaseType":0"#) == true)
            let pending = try await Self.create(sim, #"{"productId": "coins_100", "pending": true}"#)
            #expect((pending["purchaseData"] as? String)?.contains(#""purchaseState":4"#) == true)
            let subscription = try await Self.create(sim, #"{"productId": "vip_month", "kind": "subscription"}"#)
            #expect(
                (subscription["purchaseData"] as? String)?.contains(#""autoRenewing":true,"acknowledged":false}"#)
                    == true)
            let tester = try await Self.create(sim, #"{"productId": "coins_100", "withoutOrderId": true}"#)
            #expect(tester["orderId"] == nil)
            #expect((tester["purchaseData"] as? String)?.hasPrefix(#"{"packageName":"#) == true)
            // A pending purchase completed: the client's purchase now says purchased, signed anew.
            let token = try #require(pending["purchaseToken"] as? String)
            let completed = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(token)/complete")
            let data = try #require(completed["purchaseData"] as? String)
            #expect(data.contains(#""purchaseState":0"#))
            let key = try #require(try await sim.playSettings().licenseKeys[Self.package])
            #expect(try Self.verifies(data, completed["signature"] as? String ?? "", key: key))
        }
    }

    @Test func keysAreMadeOnceInTheStateDirectoryAndReused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("play-sim-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        func run() async throws -> (PlaySimulatorSettings, [String: Any]) {
            let simulator = try AppStoreSimulator(
                configuration: .init(
                    stateDirectory: directory, logger: silentLogger, playPackageNames: ["com.a", "com.b"]))
            let (settings, file) = try await simulator.withRunning { sim in
                let settings = try await sim.playSettings()
                return (settings, try Data(contentsOf: URL(fileURLWithPath: try #require(settings.serviceAccountFile))))
            }
            return (settings, try JSONSerialization.jsonObject(with: file) as? [String: Any] ?? [:])
        }
        let (first, firstFile) = try await run()
        let (second, secondFile) = try await run()
        #expect(first.licenseKeys == second.licenseKeys)
        #expect(Set(first.licenseKeys.keys) == ["com.a", "com.b"])
        #expect(first.jobEnvironment["GOOGLE_PLAY_PACKAGE_NAMES"] == "com.a,com.b")
        #expect(
            first.jobEnvironment["GOOGLE_PLAY_LICENSE_KEYS"]?.hasPrefix(
                "com.a=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA") == true)
        #expect(firstFile["type"] as? String == "service_account")
        #expect(firstFile["private_key_id"] as? String == secondFile["private_key_id"] as? String)
        #expect((firstFile["private_key"] as? String)?.hasPrefix("-----BEGIN PRIVATE KEY-----") == true)
        // Each run's key file names that run's own token endpoint.
        #expect(firstFile["token_uri"] as? String == first.tokenURI)
        #expect(secondFile["token_uri"] as? String == second.tokenURI)
        #expect(second.tokenURI == second.apiURL + "/token")
        let attributes = try FileManager.default.attributesOfItem(atPath: try #require(first.serviceAccountFile))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    // MARK: - OAuth

    @Test func anAssertionOfTheServiceAccountGetsATokenThatIsReused() async throws {
        try await withSimulator { sim in
            let account = try await PlayHTTP.serviceAccount(sim)
            let answer = try await PlayHTTP.token(
                sim,
                assertion: try PlayHTTP.assertion(key: account.key, email: account.email, audience: account.tokenURI))
            #expect(answer.status == 200)
            #expect(answer.object["expires_in"] as? Int == 3599)
            #expect(answer.object["token_type"] as? String == "Bearer")
            let token = try #require(answer.object["access_token"] as? String)
            let created = try await Self.create(sim, #"{"productId": "coins_100"}"#)
            let path = PlayHTTP.api(
                Self.package, "purchases/productsv2/tokens/\(created["purchaseToken"] as? String ?? "")")
            for _ in 0..<3 {
                #expect(try await PlayHTTP.send(sim, "GET", path, bearer: token).status == 200)
            }
            let stats = sim.simulator.play.stats
            #expect(stats.tokensIssued == 1)
            #expect(stats.requestsByEndpoint["productsv2"] == 3)
        }
    }

    @Test(arguments: ["other key", "other issuer", "other audience", "no scope", "two hours", "expired"])
    func aWrongAssertionGetsNoToken(_ wrong: String) async throws {
        try await withSimulator { sim in
            let account = try await PlayHTTP.serviceAccount(sim)
            var key = account.key
            var email = account.email
            var audience = account.tokenURI
            var scope = "https://www.googleapis.com/auth/androidpublisher"
            var lifetime: Int64 = 3600
            var age: Int64 = 0
            switch wrong {
            case "other key": key = try await PlayHTTP.otherKey()
            case "other issuer": email = "someone@else.iam.gserviceaccount.com"
            case "other audience": audience = "https://oauth2.googleapis.com/token"
            case "no scope": scope = "https://www.googleapis.com/auth/cloud-platform"
            case "two hours": lifetime = 7200
            default: age = 7200
            }
            let answer = try await PlayHTTP.token(
                sim,
                assertion: try PlayHTTP.assertion(
                    key: key, email: email, audience: audience, scope: scope, lifetime: lifetime, age: age))
            #expect(answer.status == 400)
            let error = answer.object["error"] as? String
            #expect(error == (wrong == "no scope" ? "invalid_scope" : "invalid_grant"))
            #expect(answer.object["access_token"] == nil)
            #expect(sim.simulator.play.stats.tokensIssued == 0)
        }
    }

    @Test func theAPIRefusesAMissingOrUnknownBearerToken() async throws {
        try await withSimulator { sim in
            let path = PlayHTTP.api(Self.package, "purchases/productsv2/tokens/abc")
            for bearer in [nil, "ya29.not-issued"] {
                let answer = try await PlayHTTP.send(sim, "GET", path, bearer: bearer)
                #expect(answer.status == 401)
                let error = answer.object["error"] as? [String: Any]
                #expect(error?["status"] as? String == "UNAUTHENTICATED")
                #expect(error?["code"] as? Int == 401)
            }
        }
    }

    // MARK: - productsv2, subscriptionsv2

    @Test func productsV2AnswersTheDocumentedFields() async throws {
        try await withSimulator { sim in
            let bearer = try await PlayHTTP.accessToken(sim)
            let created = try await Self.create(
                sim,
                #"{"productId": "coins_100", "quantity": 3, "obfuscatedAccountId": "u-42", "testPurchase": true, "purchaseTimeMillis": 1764000000123}"#
            )
            let token = try #require(created["purchaseToken"] as? String)
            _ = try await PlayHTTP.admin(
                sim, "/sim/play/purchases/\(token)/void", #"{"quantity": 1, "voidedReason": 1}"#)
            let answer = try await PlayHTTP.send(
                sim, "GET", PlayHTTP.api(Self.package, "purchases/productsv2/tokens/\(token)"), bearer: bearer)
            #expect(answer.status == 200)
            let purchase = answer.object
            #expect(purchase["kind"] as? String == "androidpublisher#productPurchaseV2")
            #expect((purchase["purchaseStateContext"] as? [String: Any])?["purchaseState"] as? String == "PURCHASED")
            #expect(purchase["acknowledgementState"] as? String == "ACKNOWLEDGEMENT_STATE_PENDING")
            #expect(purchase["orderId"] as? String == created["orderId"] as? String)
            #expect(purchase["obfuscatedExternalAccountId"] as? String == "u-42")
            #expect((purchase["testPurchaseContext"] as? [String: Any])?["fopType"] as? String == "TEST")
            #expect(purchase["purchaseCompletionTime"] as? String == "2025-11-24T16:00:00.123Z")
            let item = try #require((purchase["productLineItem"] as? [[String: Any]])?.first)
            #expect(item["productId"] as? String == "coins_100")
            let offer = item["productOfferDetails"] as? [String: Any]
            #expect(offer?["quantity"] as? Int == 3)
            #expect(offer?["refundableQuantity"] as? Int == 2)
            #expect(offer?["consumptionState"] as? String == "CONSUMPTION_STATE_YET_TO_BE_CONSUMED")

            let pending = try await Self.create(sim, #"{"productId": "coins_100", "pending": true}"#)
            let pendingAnswer = try await PlayHTTP.send(
                sim, "GET",
                PlayHTTP.api(Self.package, "purchases/productsv2/tokens/\(pending["purchaseToken"] as? String ?? "")"),
                bearer: bearer)
            #expect(
                (pendingAnswer.object["purchaseStateContext"] as? [String: Any])?["purchaseState"] as? String
                    == "PENDING")
            #expect(pendingAnswer.object["purchaseCompletionTime"] == nil)

            // An unknown token, or a known one under another package, is Google's 404.
            for path in [
                PlayHTTP.api(Self.package, "purchases/productsv2/tokens/unknown"),
                PlayHTTP.api("com.other", "purchases/productsv2/tokens/\(token)"),
            ] {
                let missing = try await PlayHTTP.send(sim, "GET", path, bearer: bearer)
                #expect(missing.status == 404)
                let error = missing.object["error"] as? [String: Any]
                #expect(error?["status"] as? String == "NOT_FOUND")
                #expect(((error?["errors"] as? [[String: Any]])?.first)?["reason"] as? String == "notFound")
            }
        }
    }

    @Test func subscriptionsV2FollowsRenewalsOnOneToken() async throws {
        try await withSimulator { sim in
            let bearer = try await PlayHTTP.accessToken(sim)
            let now = Date().millisecondsSince1970
            let created = try await Self.create(
                sim,
                #"{"productId": "vip_month", "kind": "subscription", "obfuscatedAccountId": "u-7", "purchaseTimeMillis": \#(now - 86_400_000)}"#
            )
            let token = try #require(created["purchaseToken"] as? String)
            let first = try #require(created["orderId"] as? String)
            let renewed = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(token)/renew")
            #expect(renewed["orderId"] as? String == first + "..0")
            #expect((renewed["purchaseData"] as? String)?.contains(#""orderId":"\#(first)..0""#) == true)
            let again = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(token)/renew")
            #expect(again["orderId"] as? String == first + "..1")

            let answer = try await PlayHTTP.send(
                sim, "GET", PlayHTTP.api(Self.package, "purchases/subscriptionsv2/tokens/\(token)"), bearer: bearer)
            #expect(answer.status == 200)
            let subscription = answer.object
            #expect(subscription["kind"] as? String == "androidpublisher#subscriptionPurchaseV2")
            #expect(subscription["subscriptionState"] as? String == "SUBSCRIPTION_STATE_ACTIVE")
            #expect(subscription["acknowledgementState"] as? String == "ACKNOWLEDGEMENT_STATE_PENDING")
            #expect(
                (subscription["externalAccountIdentifiers"] as? [String: Any])?["obfuscatedExternalAccountId"]
                    as? String
                    == "u-7")
            #expect(subscription["testPurchase"] == nil)
            let item = try #require((subscription["lineItems"] as? [[String: Any]])?.first)
            #expect(item["productId"] as? String == "vip_month")
            #expect(item["latestSuccessfulOrderId"] as? String == first + "..1")
            #expect((item["autoRenewingPlan"] as? [String: Any])?["autoRenewEnabled"] as? Bool == true)
            // Three periods of 30 days from the purchase, in RFC 3339.
            let expiry = try #require(item["expiryTime"] as? String)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            #expect(formatter.date(from: expiry)?.millisecondsSince1970 == now - 86_400_000 + 90 * 86_400_000)
            // The one-time endpoint does not know a subscription's token.
            let wrongKind = try await PlayHTTP.send(
                sim, "GET", PlayHTTP.api(Self.package, "purchases/productsv2/tokens/\(token)"), bearer: bearer)
            #expect(wrongKind.status == 404)
        }
    }

    // MARK: - Voided purchases

    @Test func voidsArePagedFilteredByVoidTimeAndKeptThirtyDays() async throws {
        try await withSimulator { sim in
            let bearer = try await PlayHTTP.accessToken(sim)
            let now = Date().millisecondsSince1970
            let hour: Int64 = 3_600_000
            var tokens: [String] = []
            // Voided 40 days ago (gone), then 5, 4, 3, 2 and 1 hours ago.
            for hoursAgo in [960, 5, 4, 3, 2, 1] as [Int64] {
                let created = try await Self.create(sim, #"{"productId": "coins_100"}"#)
                let token = try #require(created["purchaseToken"] as? String)
                _ = try await PlayHTTP.admin(
                    sim, "/sim/play/purchases/\(token)/void",
                    #"{"voidedReason": 7, "voidedSource": 2, "voidedTimeMillis": \#(now - hoursAgo * hour)}"#)
                tokens.append(token)
            }
            func list(_ query: String) async throws -> [String: Any] {
                let answer = try await PlayHTTP.send(
                    sim, "GET", PlayHTTP.api(Self.package, "purchases/voidedpurchases?" + query), bearer: bearer)
                #expect(answer.status == 200)
                return answer.object
            }
            var seen: [String] = []
            var query = "type=1&maxResults=2&startTime=\(now - 60 * 86_400_000)"
            var pages = 0
            while true {
                let page = try await list(query)
                pages += 1
                for record in page["voidedPurchases"] as? [[String: Any]] ?? [] {
                    seen.append(record["purchaseToken"] as? String ?? "")
                    #expect(record["voidedReason"] as? Int == 7)
                    #expect(record["voidedSource"] as? Int == 2)
                    #expect(record["voidedTimeMillis"] is String)
                    #expect(record["purchaseTimeMillis"] is String)
                    #expect(record["orderId"] is String)
                }
                guard let next = (page["tokenPagination"] as? [String: Any])?["nextPageToken"] as? String else { break }
                // Google's reference spells it pageSelection.token; its libraries send token.
                query = (pages % 2 == 0 ? "token=" : "pageSelection.token=") + next + "&maxResults=2"
            }
            #expect(pages == 3)
            #expect(seen == Array(tokens.dropFirst()))
            // The window filters on when the void was recorded.
            let window = try await list("startTime=\(now - 4 * hour - 1)&endTime=\(now - 2 * hour + 1)")
            #expect(
                (window["voidedPurchases"] as? [[String: Any]])?.compactMap { $0["purchaseToken"] as? String }
                    == Array(tokens[2...4]))
            // Nothing in the window: no voidedPurchases member at all, as Google leaves empty lists out.
            let empty = try await list("startTime=\(now - 100 * hour)&endTime=\(now - 50 * hour)")
            #expect(empty["voidedPurchases"] == nil)
        }
    }

    @Test func partialRefundsAndSubscriptionVoidsAreListedOnlyWhenAskedFor() async throws {
        try await withSimulator { sim in
            let bearer = try await PlayHTTP.accessToken(sim)
            let coins = try await Self.create(sim, #"{"productId": "coins_100", "quantity": 5}"#)
            let coinsToken = try #require(coins["purchaseToken"] as? String)
            _ = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(coinsToken)/void", #"{"quantity": 2}"#)
            let vip = try await Self.create(sim, #"{"productId": "vip_month", "kind": "subscription"}"#)
            let vipToken = try #require(vip["purchaseToken"] as? String)
            let renewal = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(vipToken)/renew")
            _ = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(vipToken)/void", #"{"voidedReason": 1}"#)
            func records(_ query: String) async throws -> [[String: Any]] {
                let answer = try await PlayHTTP.send(
                    sim, "GET", PlayHTTP.api(Self.package, "purchases/voidedpurchases?" + query), bearer: bearer)
                return answer.object["voidedPurchases"] as? [[String: Any]] ?? []
            }
            #expect(try await records("").isEmpty)
            let subscriptions = try await records("type=1")
            #expect(subscriptions.map { $0["orderId"] as? String } == [renewal["orderId"] as? String])
            let partial = try await records("includeQuantityBasedPartialRefund=true")
            #expect(partial.count == 1)
            #expect(partial.first?["voidedQuantity"] as? Int == 2)
            #expect(partial.first?["orderId"] as? String == coins["orderId"] as? String)
            // Refunding the other three makes it a full void, listed without the flag too.
            _ = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(coinsToken)/void", #"{"quantity": 3}"#)
            let full = try await records("")
            #expect(full.count == 1)
            #expect(full.first?["voidedQuantity"] as? Int == 3)
            #expect(try await records("type=1&includeQuantityBasedPartialRefund=true").count == 3)
        }
    }

    @Test func anUnacknowledgedPurchaseIsRefundedWithReasonEightAfterThreeDays() async throws {
        try await withSimulator { sim in
            let bearer = try await PlayHTTP.accessToken(sim)
            let fourDaysAgo = Date().millisecondsSince1970 - 4 * 86_400_000
            let forgotten = try await Self.create(
                sim, #"{"productId": "coins_100", "purchaseTimeMillis": \#(fourDaysAgo)}"#)
            _ = try await Self.create(
                sim, #"{"productId": "coins_100", "acknowledged": true, "purchaseTimeMillis": \#(fourDaysAgo)}"#)
            _ = try await Self.create(sim, #"{"productId": "coins_100"}"#)
            _ = try await PlayHTTP.admin(sim, "/sim/play/expire-unacknowledged")
            let answer = try await PlayHTTP.send(
                sim, "GET", PlayHTTP.api(Self.package, "purchases/voidedpurchases"), bearer: bearer)
            let records = answer.object["voidedPurchases"] as? [[String: Any]] ?? []
            #expect(records.map { $0["purchaseToken"] as? String } == [forgotten["purchaseToken"] as? String])
            #expect(records.first?["voidedReason"] as? Int == 8)
        }
    }

    // MARK: - Acknowledge, orders

    @Test func acknowledgeSucceedsOnceThenRefusesAndRefusesAVoidedPurchase() async throws {
        try await withSimulator { sim in
            let bearer = try await PlayHTTP.accessToken(sim)
            let paid = try await Self.create(sim, #"{"productId": "coins_100"}"#)
            let path = PlayHTTP.api(
                Self.package,
                "purchases/products/coins_100/tokens/\(paid["purchaseToken"] as? String ?? ""):acknowledge")
            let first = try await PlayHTTP.send(sim, "POST", path, body: "{}", bearer: bearer)
            #expect(first.status == 204)
            #expect(first.body.isEmpty)
            let again = try await PlayHTTP.send(sim, "POST", path, body: "{}", bearer: bearer)
            #expect(again.status == 400)
            func reason(_ answer: PlayHTTP.Answer) -> String? {
                (((answer.object["error"] as? [String: Any])?["errors"] as? [[String: Any]])?.first)?["reason"]
                    as? String
            }
            #expect(reason(again) == "invalidPurchaseState")

            let refunded = try await Self.create(sim, #"{"productId": "vip_month", "kind": "subscription"}"#)
            let token = try #require(refunded["purchaseToken"] as? String)
            _ = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(token)/void")
            let voided = try await PlayHTTP.send(
                sim, "POST",
                PlayHTTP.api(Self.package, "purchases/subscriptions/vip_month/tokens/\(token):acknowledge"),
                bearer: bearer)
            #expect(voided.status == 400)
            #expect(reason(voided) == "productNotOwnedByUser")
            // The verb is part of the route: another one, or none, is no route at all.
            let otherVerb = try await PlayHTTP.send(
                sim, "POST", PlayHTTP.api(Self.package, "purchases/subscriptions/vip_month/tokens/\(token):consume"),
                bearer: bearer)
            #expect(otherVerb.status == 404)
            #expect(sim.simulator.play.purchase(token)?.acknowledged == false)
            #expect(sim.simulator.play.stats.requestsByEndpoint["products.acknowledge"] == 2)
        }
    }

    @Test func ordersGetFindsEveryOrderAndItsRefunds() async throws {
        try await withSimulator { sim in
            let bearer = try await PlayHTTP.accessToken(sim)
            func order(_ id: String) async throws -> PlayHTTP.Answer {
                try await PlayHTTP.send(sim, "GET", PlayHTTP.api(Self.package, "orders/\(id)"), bearer: bearer)
            }
            let coins = try await Self.create(sim, #"{"productId": "coins_100", "quantity": 4}"#)
            let coinsOrder = try #require(coins["orderId"] as? String)
            let coinsToken = try #require(coins["purchaseToken"] as? String)
            let processed = try await order(coinsOrder)
            #expect(processed.status == 200)
            #expect(processed.object["state"] as? String == "PROCESSED")
            #expect(processed.object["purchaseToken"] as? String == coinsToken)
            let item = (processed.object["lineItems"] as? [[String: Any]])?.first
            #expect((item?["oneTimePurchaseDetails"] as? [String: Any])?["quantity"] as? Int == 4)
            #expect((processed.object["total"] as? [String: Any])?["units"] as? String == "3")

            _ = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(coinsToken)/void", #"{"quantity": 1}"#)
            let partly = try await order(coinsOrder)
            #expect(partly.object["state"] as? String == "PARTIALLY_REFUNDED")
            let history = partly.object["orderHistory"] as? [String: Any]
            #expect((history?["partialRefundEvents"] as? [[String: Any]])?.count == 1)
            _ = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(coinsToken)/void", #"{"voidedReason": 7}"#)
            let refunded = try await order(coinsOrder)
            #expect(refunded.object["state"] as? String == "REFUNDED")
            #expect(
                ((refunded.object["orderHistory"] as? [String: Any])?["refundEvent"] as? [String: Any])?["refundReason"]
                    as? String == "CHARGEBACK")

            let vip = try await Self.create(sim, #"{"productId": "vip_month", "kind": "subscription"}"#)
            let renewal = try await PlayHTTP.admin(
                sim, "/sim/play/purchases/\(vip["purchaseToken"] as? String ?? "")/renew")
            let renewalOrder = try await order(try #require(renewal["orderId"] as? String))
            #expect(renewalOrder.status == 200)
            #expect(renewalOrder.object["purchaseToken"] as? String == vip["purchaseToken"] as? String)

            // A licence tester's purchase has no order; its token is no order id either.
            let tester = try await Self.create(sim, #"{"productId": "coins_100", "withoutOrderId": true}"#)
            #expect(try await order(tester["purchaseToken"] as? String ?? "").status == 404)
            let unknown = try await order("GPA.0000-0000-0000-00000")
            #expect(unknown.status == 404)
            #expect((unknown.object["error"] as? [String: Any])?["code"] as? Int == 404)
        }
    }

    // MARK: - Notifications

    @Test func aNotificationArrivesAsAPubSubPushWithBothSpellings() async throws {
        try await withSimulator { sim in
            let created = try await Self.create(sim, #"{"productId": "coins_100"}"#)
            let token = try #require(created["purchaseToken"] as? String)
            _ = try await PlayHTTP.admin(sim, "/sim/play/purchases/\(token)/void")
            try await PushEndpoint.with { endpoint, url in
                let pushed = try await PlayHTTP.admin(
                    sim, "/sim/play/notifications",
                    #"{"kind": "voided", "purchaseToken": "\#(token)", "url": "\#(url)", "pushToken": "s3cret/+", "messageId": "136969346945"}"#
                )
                #expect(pushed["status"] as? Int == 204)
                #expect(pushed["messageId"] as? String == "136969346945")
                let received = try #require(endpoint.requests.first)
                #expect(received.query == "token=s3cret%2F%2B")
                let envelope = try #require(try JSONSerialization.jsonObject(with: received.body) as? [String: Any])
                #expect(envelope["subscription"] as? String == "projects/appstore-sim/subscriptions/play-rtdn")
                let message = try #require(envelope["message"] as? [String: Any])
                #expect(message["messageId"] as? String == "136969346945")
                #expect(message["message_id"] as? String == "136969346945")
                #expect(message["publishTime"] as? String == message["publish_time"] as? String)
                #expect(message["attributes"] is [String: Any])
                let data = try #require(Data(base64Encoded: message["data"] as? String ?? ""))
                let notification = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                #expect(notification["version"] as? String == "1.0")
                #expect(notification["packageName"] as? String == Self.package)
                #expect(notification["eventTimeMillis"] is String)
                let voided = notification["voidedPurchaseNotification"] as? [String: Any]
                #expect(voided?["purchaseToken"] as? String == token)
                #expect(voided?["orderId"] as? String == created["orderId"] as? String)
                #expect(voided?["productType"] as? Int == 2)
                #expect(voided?["refundType"] as? Int == 1)

                _ = try await PlayHTTP.admin(sim, "/sim/play/notifications", #"{"kind": "garbage", "url": "\#(url)"}"#)
                let garbage = try #require(endpoint.requests.last)
                let garbageMessage =
                    (try JSONSerialization.jsonObject(with: garbage.body) as? [String: Any])?["message"]
                    as? [String: Any]
                let garbageData = Data(base64Encoded: garbageMessage?["data"] as? String ?? "") ?? Data()
                #expect((try? JSONSerialization.jsonObject(with: garbageData)) == nil)
                #expect(endpoint.requests.count == 2)
            }
            // The record keeps the URL without the push token.
            #expect(sim.simulator.play.pushes.allSatisfy { !$0.url.contains("s3cret") })
        }
    }

    @Test func subscriptionAndOneTimeNotificationsNameTheirProduct() async throws {
        try await withSimulator { sim in
            let vip = try await Self.create(sim, #"{"productId": "vip_month", "kind": "subscription"}"#)
            let coins = try await Self.create(sim, #"{"productId": "coins_100"}"#)
            let subscription = try sim.simulator.play.developerNotification(
                .init(kind: .subscription, purchaseToken: vip["purchaseToken"] as? String, notificationType: 2))
            let object = try JSONSerialization.jsonObject(with: Data(subscription.utf8)) as? [String: Any]
            let inner = object?["subscriptionNotification"] as? [String: Any]
            #expect(inner?["subscriptionId"] as? String == "vip_month")
            #expect(inner?["notificationType"] as? Int == 2)
            let oneTime = try sim.simulator.play.developerNotification(
                .init(kind: .oneTime, purchaseToken: coins["purchaseToken"] as? String))
            let oneTimeObject = try JSONSerialization.jsonObject(with: Data(oneTime.utf8)) as? [String: Any]
            #expect((oneTimeObject?["oneTimeProductNotification"] as? [String: Any])?["sku"] as? String == "coins_100")
            #expect((oneTimeObject?["oneTimeProductNotification"] as? [String: Any])?["notificationType"] as? Int == 1)
        }
    }

    // MARK: - Faults

    @Test(arguments: [
        (#"{"permission_denied_share": 1}"#, 401, "permissionDenied"),
        (#"{"http_5xx_share": 1}"#, 503, "backendError"),
        (#"{"http_429_share": 1}"#, 429, "rateLimitExceeded"),
        (#"{"http_409_share": 1}"#, 409, "concurrentUpdate"),
        (#"{"empty_401_share": 1}"#, 401, ""),
    ])
    func playFaultsAnswerAsGoogleDoesThenClear(_ faults: String, _ status: Int, _ reason: String) async throws {
        try await withSimulator { sim in
            let bearer = try await PlayHTTP.accessToken(sim)
            let created = try await Self.create(sim, #"{"productId": "coins_100"}"#)
            let path = PlayHTTP.api(
                Self.package, "purchases/productsv2/tokens/\(created["purchaseToken"] as? String ?? "")")
            let play = faults.dropLast() + #", "requests": 1}"#
            try await SimulatorAdmin.setFaults(sim, #"{"play": \#(play)}"#)
            let faulty = try await PlayHTTP.send(sim, "GET", path, bearer: bearer)
            #expect(faulty.status == status)
            let error = faulty.object["error"] as? [String: Any]
            if reason.isEmpty {
                #expect(faulty.body.isEmpty)
            } else {
                #expect(((error?["errors"] as? [[String: Any]])?.first)?["reason"] as? String == reason)
                #expect(error?["code"] as? Int == status)
            }
            #expect(try await PlayHTTP.send(sim, "GET", path, bearer: bearer).status == 200)
        }
    }

    @Test func appleFaultsLeaveGooglePlayAloneAndPlayLatencyDelays() async throws {
        try await withSimulator(faults: .init(http503Share: 1, apiErrorCode: 4_040_010)) { sim in
            let bearer = try await PlayHTTP.accessToken(sim)
            let created = try await Self.create(sim, #"{"productId": "coins_100"}"#)
            let path = PlayHTTP.api(
                Self.package, "purchases/productsv2/tokens/\(created["purchaseToken"] as? String ?? "")")
            #expect(try await PlayHTTP.send(sim, "GET", path, bearer: bearer).status == 200)
            try await SimulatorAdmin.setFaults(sim, #"{"play": {"latency_ms": 300}}"#)
            let started = ContinuousClock.now
            #expect(try await PlayHTTP.send(sim, "GET", path, bearer: bearer).status == 200)
            #expect(ContinuousClock.now - started >= .milliseconds(300))
        }
    }
}
