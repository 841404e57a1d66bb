import AppStore
import Foundation

extension VerifyReceiptClient.Configuration {
    /// Reads SPEC section 9's variables: `APPLE_VERIFY_RECEIPT_URL`,
    /// `APPLE_VERIFY_RECEIPT_SANDBOX_URL`, `APPLE_SHARED_SECRET`, `RECONCILE_CONCURRENCY`.
    init(environment: [String: String]) throws {
        self.init()
        func value(_ name: String) -> String? {
            guard let raw = environment[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
        for (name, keyPath) in [
            ("APPLE_VERIFY_RECEIPT_URL", \Self.productionURL), ("APPLE_VERIFY_RECEIPT_SANDBOX_URL", \Self.sandboxURL),
        ] {
            guard let url = value(name) else { continue }
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
                parsed.host != nil
            else { throw ConfigurationError("\(name) is not an http(s) URL: \(url)") }
            self[keyPath: keyPath] = url
        }
        if let secret = value("APPLE_SHARED_SECRET") { sharedSecret = AppleSharedSecret(secret) }
        if let text = value("RECONCILE_CONCURRENCY") {
            guard let concurrency = Int(text), (1...1024).contains(concurrency) else {
                throw ConfigurationError("RECONCILE_CONCURRENCY must be a number from 1 to 1024, not \(text)")
            }
            maxConcurrentRequests = concurrency
        }
    }
}
