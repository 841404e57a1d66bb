import AppStore
import AsyncHTTPClient
import Foundation
import GooglePlay
import Logging
import Synchronization

let quietLogger = Logger(label: "play-test", factory: { _ in SwiftLogNoOpLogHandler() })

/// A clock the tests move.
final class TestClock: Sendable {
    private let instant = Mutex(Date(timeIntervalSince1970: 1_796_227_200))
    var now: Date { instant.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { instant.withLock { $0 += seconds } }
}

/// Runs `body` with a client of `google`, quick retries, and a rate high enough not to matter
/// unless given.
func withPlayClient(
    _ google: ScriptedGoogle, rate: Double = 1000, requestTimeout: Duration = .seconds(10), maxAttempts: Int = 3,
    clock: TestClock = TestClock(),
    _ body: @escaping @Sendable (PlayDeveloperAPIClient) async throws -> Void
) async throws {
    try await google.run { base in
        let retry = RetryPolicy(maxAttempts: maxAttempts, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(50))
        let configuration = PlayDeveloperAPIClient.Configuration(
            baseURL: base, rate: rate, requestTimeout: requestTimeout, retry: retry)
        let http = PlayDeveloperAPIClient.makeHTTPClient(configuration: configuration)
        do {
            let tokens = PlayAccessTokenProvider(
                key: try PlayTestKeys.serviceAccount(tokenURI: base + "/token"), httpClient: http, retry: retry,
                now: { clock.now })
            try await body(PlayDeveloperAPIClient(configuration: configuration, tokens: tokens, httpClient: http))
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }
}

enum PlayPaths {
    static let product = "/androidpublisher/v3/applications/com.example.app/purchases/productsv2/tokens/tok-1"
    static let subscription = "/androidpublisher/v3/applications/com.example.app/purchases/subscriptionsv2/tokens/tok-1"
    static let voided = "/androidpublisher/v3/applications/com.example.app/purchases/voidedpurchases"
    static let order = "/androidpublisher/v3/applications/com.example.app/orders/GPA.1234-5678-9012-34567"

    static let productBody = #"""
        {"kind":"androidpublisher#productPurchaseV2","productLineItem":[{"productId":"gems_100","productOfferDetails":{"quantity":3,"refundableQuantity":1,"consumptionState":"CONSUMPTION_STATE_CONSUMED","offerId":"o1"}}],"purchaseStateContext":{"purchaseState":"PURCHASED"},"testPurchaseContext":{"fopType":"TEST"},"orderId":"GPA.1234-5678-9012-34567","obfuscatedExternalAccountId":"a1b2","regionCode":"FR","purchaseCompletionTime":"2026-01-01T00:00:00.123456Z","acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED","somethingNew":[1,{"x":2}]}
        """#
}
