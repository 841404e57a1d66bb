import AppStore
import AppStoreSimulator
import Foundation
import Reconciliation
import TestSupport
import Testing

/// The Server API client configuration read from SPEC section 9's variables.
@Suite struct ServerAPIConfigurationTests {
    func settings(_ values: [String: String]) throws -> Settings {
        try Settings(lookup: { (["RECONCILE_BUNDLE_IDS": "com.example.coins"].merging(values) { $1 })[$0] })
    }

    func keyFile() throws -> String {
        let url = Scratch.root.appendingPathComponent("AuthKey_\(UUID().uuidString).p8")
        try Data(SimulatorAPIKey.generate().privateKeyPEM.utf8).write(to: url)
        return url.path
    }

    @Test func withoutAKeyThereIsNoServerAPI() throws {
        #expect(try AppleServices.serverAPIConfiguration(settings([:]), bundleID: "com.example.coins") == nil)
    }

    @Test func theKeyURLsAndRatesComeFromTheEnvironment() throws {
        let file = try keyFile()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let key = ["APPSTORE_KEY_ID": "KEY123", "APPSTORE_ISSUER_ID": "issuer", "APPSTORE_PRIVATE_KEY_FILE": file]
        let defaults = try #require(
            try AppleServices.serverAPIConfiguration(settings(key), bundleID: "com.example.coins"))
        #expect(defaults.key.keyID == "KEY123")
        #expect(defaults.key.issuerID == "issuer")
        #expect(defaults.key.bundleID == "com.example.coins")
        #expect(defaults.productionURL == "https://api.storekit.apple.com")
        #expect(defaults.sandboxURL == "https://api.storekit-sandbox.apple.com")
        #expect(defaults.productionRate == 50)
        #expect(defaults.sandboxRate == 5)
        #expect(defaults.environments == [.production, .sandbox])

        let custom = try #require(
            try AppleServices.serverAPIConfiguration(
                settings(
                    key.merging([
                        "APPSTORE_API_URL": "http://127.0.0.1:8090",
                        "APPSTORE_API_SANDBOX_URL": "http://127.0.0.1:8090/sandbox",
                        "APPSTORE_API_RATE": "20",
                    ]) { $1 }), bundleID: "com.example.coins"))
        #expect(custom.productionURL == "http://127.0.0.1:8090")
        #expect(custom.sandboxURL == "http://127.0.0.1:8090/sandbox")
        #expect(custom.productionRate == 20)
        #expect(custom.sandboxRate == 2)
    }

    @Test func anUnreadableKeyFileStopsTheRunWithoutShowingTheKey() throws {
        let key = [
            "APPSTORE_KEY_ID": "KEY123", "APPSTORE_ISSUER_ID": "issuer",
            "APPSTORE_PRIVATE_KEY_FILE": "/nonexistent/k.p8",
        ]
        #expect(throws: RunConfigurationError.self) {
            try AppleServices.serverAPIConfiguration(settings(key), bundleID: "com.example.coins")
        }
    }
}
