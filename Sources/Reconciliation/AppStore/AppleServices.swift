import AppStore
import Foundation
import Logging

/// Apple's services as the settings configure them (trusted roots, verifyReceipt, the App Store
/// Server API), with their HTTP clients kept alive for as long as a command needs them.
public enum AppleServices {
    /// The trusted roots: `APPLE_ROOT_CERTIFICATES` when set (replacing the bundled ones), else
    /// Apple Root CA - G3 and Apple Inc. Root.
    public static func roots(_ settings: Settings) throws -> TrustedRoots {
        guard !settings.rootCertificateFiles.isEmpty else { return .apple }
        var files: [[UInt8]] = []
        for path in settings.rootCertificateFiles {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw RunConfigurationError("APPLE_ROOT_CERTIFICATES: cannot read \(path)")
            }
            files.append(Array(data))
        }
        do {
            return try TrustedRoots(derOrPEM: files)
        } catch {
            throw RunConfigurationError("APPLE_ROOT_CERTIFICATES: \(error)")
        }
    }

    /// The verifyReceipt client configuration of the settings.
    public static func receiptConfiguration(_ settings: Settings) -> VerifyReceiptClient.Configuration {
        VerifyReceiptClient.Configuration(
            productionURL: settings.verifyReceiptURL, sandboxURL: settings.verifyReceiptSandboxURL,
            sharedSecret: settings.sharedSecret.map { AppleSharedSecret($0.value) },
            requestTimeout: requestTimeout(settings), retry: retryPolicy(settings),
            maxConcurrentRequests: settings.concurrency)
    }

    /// `RECONCILE_MAX_ATTEMPTS` tries per request, with the clients' backoff and jitter between
    /// them: an Apple outage costs each upload a bounded number of requests, then it waits for
    /// the next run.
    static func retryPolicy(_ settings: Settings) -> RetryPolicy {
        RetryPolicy(maxAttempts: settings.maxAttempts)
    }

    static func requestTimeout(_ settings: Settings) -> Duration {
        .milliseconds(Int64((settings.appleTimeout * 1000).rounded()))
    }

    /// The App Store Server API configuration for one app, or nil when `APPSTORE_KEY_ID`,
    /// `APPSTORE_ISSUER_ID` and `APPSTORE_PRIVATE_KEY_FILE` are not set. `APPSTORE_API_RATE`
    /// paces production; the sandbox gets a tenth of it, as Apple allows (default 50 and 5).
    public static func serverAPIConfiguration(_ settings: Settings, bundleID: String) throws
        -> AppStoreServerAPIClient.Configuration?
    {
        guard let configured = settings.serverAPIKey else { return nil }
        let key: ServerAPIKey
        do {
            key = try ServerAPIKey(
                keyID: configured.keyID, issuerID: configured.issuerID, bundleID: bundleID,
                privateKeyFile: configured.privateKeyFile)
        } catch {
            throw RunConfigurationError(error.description)
        }
        let rate = settings.serverAPIRate ?? 50
        return AppStoreServerAPIClient.Configuration(
            key: key, productionURL: settings.serverAPIURL, sandboxURL: settings.serverAPISandboxURL,
            productionRate: rate, sandboxRate: rate / 10, requestTimeout: requestTimeout(settings),
            retry: retryPolicy(settings), maxConcurrentRequests: settings.concurrency)
    }

    /// Runs `body` with a verifier for the settings (uploads and notifications); its HTTP client
    /// is shut down afterwards.
    public static func withVerifier<T: Sendable>(
        settings: Settings, logger: Logger, _ body: (AppleUploadVerifier) async throws -> T
    ) async throws -> T {
        let roots = try roots(settings)
        guard settings.receiptVerification == .apple else {
            return try await body(
                AppleUploadVerifier(receiptClient: nil, roots: roots, bundleIDs: settings.bundleIDs, logger: logger))
        }
        return try await VerifyReceiptClient.withClient(configuration: receiptConfiguration(settings)) { client in
            try await body(
                AppleUploadVerifier(receiptClient: client, roots: roots, bundleIDs: settings.bundleIDs, logger: logger))
        }
    }

    /// Runs `body` with the Server API lookups when credentials are configured (nil otherwise);
    /// the API answers in the JWS it returns are checked by `verifier`'s JWS verifier.
    public static func withServerAPI<T: Sendable>(
        settings: Settings, verifier: AppleUploadVerifier, logger: Logger,
        _ body: (ServerAPILookups?) async throws -> T
    ) async throws -> T {
        guard let bundle = settings.bundleIDs.first,
            let configuration = try serverAPIConfiguration(settings, bundleID: bundle)
        else { return try await body(nil) }
        return try await AppStoreServerAPIClient.withClient(
            configuration: configuration, verifier: verifier.jwsVerifier
        ) { client in
            try await body(ServerAPILookups(client: client, settings: settings, logger: logger))
        }
    }

    /// Runs `body` with both: the verifier, and the Server API lookups (nil without credentials)
    /// whose answers its JWS verifier checks.
    public static func withVerifierAndServerAPI<T: Sendable>(
        settings: Settings, logger: Logger, _ body: (AppleUploadVerifier, ServerAPILookups?) async throws -> T
    ) async throws -> T {
        try await withVerifier(settings: settings, logger: logger) { verifier in
            try await withServerAPI(settings: settings, verifier: verifier, logger: logger) { api in
                try await body(verifier, api)
            }
        }
    }
}
