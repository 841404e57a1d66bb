import AppStore
import AsyncHTTPClient
import Foundation
import GooglePlay
import Logging

/// Google Play's services as the settings configure them (SPEC section 18).
public enum GooglePlayServices {
    /// Runs `body` with the verifier of Play uploads (nil while Play is off, `GOOGLE_PLAY_PACKAGE_NAMES`
    /// unset), asking the Developer API when `GOOGLE_PLAY_SERVICE_ACCOUNT_FILE` is set; its HTTP
    /// client is shut down afterwards. A licence key or service account that cannot be read is a
    /// configuration error: the run stops before anything is judged.
    public static func withUploadVerifier<T: Sendable>(
        settings: Settings, logger: Logger, _ body: ((any UploadVerifier)?) async throws -> T
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
            return try await body(PlayUploadVerifier(purchases: purchases, packageNames: packages, logger: logger))
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
            let result = try await body(
                PlayUploadVerifier(purchases: purchases, packageNames: packages, api: api, logger: logger))
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }
}
