import AppStore
import AsyncHTTPClient
import Foundation
import GooglePlay
import Logging

/// Google Play as the settings configure it (SPEC section 18): the verifier of its uploads and,
/// with a service account, the Developer API client every Play stage asks.
public struct PlayServices: Sendable {
    /// Verifies `play_purchase` uploads (asking `api` when there is one).
    public let uploadVerifier: PlayUploadVerifier
    /// The Developer API; nil without `GOOGLE_PLAY_SERVICE_ACCOUNT_FILE` (refunds then reach the
    /// job through nobody: the report says Play refunds are unchecked).
    public let api: PlayDeveloperAPIClient?
    /// Play's settings.
    public let settings: GooglePlaySettings
    public let logger: Logger
}

/// Google Play's services as the settings configure them (SPEC section 18).
public enum GooglePlayServices {
    /// Runs `body` with Play's services (nil while Play is off, `GOOGLE_PLAY_PACKAGE_NAMES`
    /// unset), the Developer API among them when `GOOGLE_PLAY_SERVICE_ACCOUNT_FILE` is set; its
    /// HTTP client is shut down afterwards. A licence key or service account that cannot be read is
    /// a configuration error: the run stops before anything is judged.
    public static func withServices<T: Sendable>(
        settings: Settings, logger: Logger, _ body: (PlayServices?) async throws -> T
    ) async throws -> T {
        guard settings.googlePlay.enabled else { return try await body(nil) }
        let keys: PlayLicenceKeys
        do {
            keys = try settings.googlePlay.licenseKeys.map { try PlayLicenceKeys(setting: $0) } ?? PlayLicenceKeys([:])
        } catch {
            throw RunConfigurationError("GOOGLE_PLAY_LICENSE_KEYS: \(error)")
        }
        let purchases = PlayPurchaseVerifier(keys: keys)
        let packages = settings.googlePlay.packageNames
        guard let file = settings.googlePlay.serviceAccountFile else {
            return try await body(PlayServices(
                uploadVerifier: PlayUploadVerifier(purchases: purchases, packageNames: packages, logger: logger),
                api: nil, settings: settings.googlePlay, logger: logger))
        }
        let key: PlayServiceAccountKey
        do {
            key = try PlayServiceAccountKey(file: file)
        } catch {
            throw RunConfigurationError("GOOGLE_PLAY_SERVICE_ACCOUNT_FILE: \(error)")
        }
        let configuration = PlayDeveloperAPIClient.Configuration(
            baseURL: settings.googlePlay.apiURL, rate: settings.googlePlay.apiRate,
            requestTimeout: .milliseconds(Int64((settings.appleTimeout * 1000).rounded())),
            retry: RetryPolicy(maxAttempts: settings.maxAttempts), maxConcurrentRequests: settings.concurrency)
        let http = PlayDeveloperAPIClient.makeHTTPClient(configuration: configuration)
        do {
            let tokens = PlayAccessTokenProvider(key: key, httpClient: http, requestTimeout: configuration.requestTimeout)
            let api = PlayDeveloperAPIClient(configuration: configuration, tokens: tokens, httpClient: http)
            let result = try await body(PlayServices(
                uploadVerifier: PlayUploadVerifier(purchases: purchases, packageNames: packages, api: api, logger: logger),
                api: api, settings: settings.googlePlay, logger: logger))
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    /// Runs `body` with the verifier of Play uploads (nil while Play is off).
    public static func withUploadVerifier<T: Sendable>(
        settings: Settings, logger: Logger, _ body: ((any UploadVerifier)?) async throws -> T
    ) async throws -> T {
        try await withServices(settings: settings, logger: logger) { try await body($0?.uploadVerifier) }
    }
}
