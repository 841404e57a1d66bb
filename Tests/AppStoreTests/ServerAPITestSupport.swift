import AppStore
import AppStoreSimulator
import Crypto
import Foundation
import Logging

/// Starts a simulator in this process for a Server API test.
func withAPISimulator<T: Sendable>(
    pageSize: Int = 20, apiBundleIDs: Set<String> = [], faults: SimulatorFaults = .none,
    _ body: (RunningSimulator) async throws -> T
) async throws -> T {
    var logger = Logger(label: "appstore-sim-test")
    logger.logLevel = .critical
    let simulator = try AppStoreSimulator(
        configuration: .init(faults: faults, logger: logger, apiBundleIDs: apiBundleIDs, pageSize: pageSize))
    return try await simulator.withRunning(body)
}

extension RunningSimulator {
    /// A verifier that trusts this simulator's CA and the sample bundle.
    var verifier: SignedDataVerifier {
        SignedDataVerifier(
            configuration: .init(
                trustedRoots: TrustedRoots([simulator.ca.root]), bundleIds: [AppStoreSimulator.defaultBundleID]))
    }

    /// A Server API configuration aimed at this simulator with test-sized backoff and a rate
    /// high enough not to matter unless a test sets one.
    func apiConfiguration(
        key: ServerAPIKey? = nil, rate: Double = 1000, maxAttempts: Int = 3
    ) -> AppStoreServerAPIClient.Configuration {
        AppStoreServerAPIClient.Configuration(
            key: key ?? simulator.apiKey.serverAPIKey(bundleID: AppStoreSimulator.defaultBundleID),
            productionURL: serverAPIURL, sandboxURL: serverAPISandboxURL, productionRate: rate, sandboxRate: rate,
            requestTimeout: .seconds(15),  // a loaded 2-core CI machine took over 2 s; a timeout here retried and doubled the counts
            retry: .init(maxAttempts: maxAttempts, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20)),
            maxRetryAfter: .seconds(5))
    }

    /// Runs `body` with a client aimed at this simulator.
    func withAPIClient<T: Sendable>(
        _ configuration: AppStoreServerAPIClient.Configuration? = nil, verifier: SignedDataVerifier? = nil,
        _ body: (AppStoreServerAPIClient) async throws -> T
    ) async throws -> T {
        try await AppStoreServerAPIClient.withClient(
            configuration: configuration ?? apiConfiguration(), verifier: verifier ?? self.verifier, body)
    }

    /// Creates `count` purchases for one customer, a second apart from `start`.
    @discardableResult
    func createHistory(
        customer: String, count: Int, environment: AppStoreEnvironment = .production,
        start: Date = Date(timeIntervalSince1970: 1_760_000_000), refunded: Set<Int> = []
    ) throws -> [CreatedTransaction] {
        try (0..<count).map { index in
            let purchased = start.addingTimeInterval(Double(index))
            return try simulator.createTransaction(
                SimulatedTransaction(
                    productId: index % 2 == 0 ? "coins_100" : "coins_500", customer: customer,
                    environment: environment, quantity: 1, purchaseDate: purchased,
                    appAccountToken: UUID(), price: 990, currency: "USD",
                    revocationDate: refunded.contains(index) ? purchased.addingTimeInterval(3600) : nil))
        }
    }
}

/// Test-side JWT tooling, written apart from the client's so that each checks the other.
enum TestJWT {
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ segment: Substring) -> Data? {
        var text = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }

    /// A token with arbitrary claims, signed by `key`.
    static func make(
        key: P256.Signing.PrivateKey, kid: String, iss: String, iat: Date, lifetime: TimeInterval = 300,
        aud: String = "appstoreconnect-v1", bid: String = AppStoreSimulator.defaultBundleID
    ) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": kid, "typ": "JWT"])
        let issued = Int(iat.timeIntervalSince1970)
        let claims = try JSONSerialization.data(
            withJSONObject: [
                "iss": iss, "iat": issued, "exp": issued + Int(lifetime), "aud": aud, "bid": bid,
            ] as [String: Any])
        let input = base64URL(header) + "." + base64URL(claims)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }
}
