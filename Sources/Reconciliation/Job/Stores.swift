import Foundation
import Logging

/// Every store's services as the settings configure them, registered in one place (SPEC section
/// 18; docs/architecture.md, "Stores"): each store's upload verifier behind `StoreUploadVerifier`.
public enum Stores {
    /// Runs `body` with the job as `reconcile run` builds it: uploads verified by their store,
    /// Apple's notifications applied and histories fetched, Google Play's voids, orders and
    /// acknowledgements handled, through the services of the settings.
    public static func withJob<T: Sendable>(
        settings: Settings, logger: Logger, _ body: (ReconciliationJob) async throws -> T
    ) async throws -> T {
        try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: logger) { apple, api in
            try await GooglePlayServices.withServices(settings: settings, logger: logger) { play in
                try await body(ReconciliationJob(
                    settings: settings, verifier: verifier(apple: apple, play: play?.uploadVerifier),
                    notifications: NotificationApplier(verify: apple.verifyNotification), serverAPI: api,
                    play: play, logger: logger))
            }
        }
    }

    /// Runs `body` with every configured store's upload verifier (a worker's, `run --worker`).
    public static func withVerifier<T: Sendable>(
        settings: Settings, logger: Logger, _ body: (StoreUploadVerifier) async throws -> T
    ) async throws -> T {
        try await AppleServices.withVerifier(settings: settings, logger: logger) { apple in
            try await GooglePlayServices.withUploadVerifier(settings: settings, logger: logger) { play in
                try await body(verifier(apple: apple, play: play))
            }
        }
    }

    /// The registration: each store's verifier, by its store.
    private static func verifier(apple: AppleUploadVerifier, play: (any UploadVerifier)?) -> StoreUploadVerifier {
        var verifiers: [Store: any UploadVerifier] = [.appStore: apple]
        if let play { verifiers[.googlePlay] = play }
        return StoreUploadVerifier(verifiers)
    }
}
