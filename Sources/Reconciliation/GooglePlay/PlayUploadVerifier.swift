import AppStore
import Foundation
import GooglePlay
import Logging

/// Verifies Google Play uploads (`play_purchase`, SPEC section 18): the signature over the exact
/// `purchaseData` bytes under its package's licence key, locally; then, with a service account,
/// the purchase's state today from the Play Developer API (productsv2 or subscriptionsv2), the
/// authority: a refund, a partial refund, the acknowledgement, a test purchase. Every upload ends
/// as a `Verdict`; bad input is `invalid` with Google Play's precise reason (`play_<reason>`),
/// never a stopped run; only a service account Google refuses (401, 403) stops it.
public struct PlayUploadVerifier: UploadVerifier {
    let purchases: PlayPurchaseVerifier
    let acceptedPackages: Set<String>
    let api: PlayDeveloperAPIClient?
    let logger: Logger

    /// Creates a verifier over the licence keys, accepting `packageNames` (`GOOGLE_PLAY_PACKAGE_NAMES`),
    /// asking `api` when a service account is configured.
    public init(purchases: PlayPurchaseVerifier, packageNames: [String], api: PlayDeveloperAPIClient? = nil,
                logger: Logger = Logger(label: "reconcile.play")) {
        self.purchases = purchases
        acceptedPackages = Set(packageNames)
        self.api = api
        self.logger = logger
    }

    public func verify(_ upload: Upload, attempt: Int) async throws -> Verdict {
        func invalid(_ failure: PlayUploadFailure) -> Verdict {
            .invalid(code: VerificationFailure(rawValue: "play_\(failure.code)"), reason: failure.description, appleStatus: nil)
        }
        let parsed: PlayPurchaseUpload
        do {
            parsed = try PlayPurchaseUpload(payload: upload.payload.utf8)
        } catch {
            return invalid(error)
        }
        switch purchases.verify(parsed) {
        case .invalid(let failure):
            // Another app's purchase under a key the job holds for one of its own (SPEC section 18:
            // a package not in GOOGLE_PLAY_PACKAGE_NAMES is a foreign_bundle); without a key that
            // verifies it, a package without a key is refused.
            if case .packageWithoutKey(let package) = failure, !acceptedPackages.contains(package),
                let purchase = purchases.purchaseSignedByAnotherKey(parsed) {
                return Self.foreign(purchase)
            }
            return invalid(failure)
        case .valid(let purchase):
            guard acceptedPackages.contains(purchase.packageName) else { return Self.foreign(purchase) }
            var record = AppleTransactionRecord(playPurchase: purchase)
            var method = VerificationMethod.playSignature
            if let api {
                switch try await Self.ask(api, about: purchase, logger: logger) {
                case .state(let observed):
                    record.apply(observed)
                    method = .playAPI
                case .unknownToGoogle:
                    return .invalid(
                        code: .playTokenUnknown,
                        reason: "the signature verifies, but Google does not know the purchase token (404)", appleStatus: nil)
                case .noLongerKept:
                    break  // 410: Google no longer keeps it; its signed purchaseData is all there is.
                case .retry(let reason):
                    return .retry(reason: reason, appleStatus: nil)
                }
            }
            var verified = VerifiedUpload(
                method: method, appleStatus: nil, environment: record.environment, bundleID: purchase.packageName,
                transactions: [record])
            verified.store = .googlePlay
            return .verified(verified)
        }
    }
}

extension PlayUploadVerifier {
    /// Signed by Google for another app: a foreign_bundle finding, its purchase not judged.
    static func foreign(_ purchase: PlayPurchaseData) -> Verdict {
        var foreign = VerifiedUpload(
            method: .playSignature, appleStatus: nil, environment: AppStoreEnvironment(rawValue: ""),
            bundleID: purchase.packageName, transactions: [])
        foreign.store = .googlePlay
        return .verified(foreign)
    }

    /// What the Developer API says of a purchase now.
    enum Answer {
        case state(PlayObservedState)
        case unknownToGoogle
        case noLongerKept
        case retry(String)
    }

    /// Asks productsv2 for a one-time product, subscriptionsv2 for a subscription (`autoRenewing`
    /// is in a subscription's purchaseData only). A configuration Google refuses stops the run.
    static func ask(_ api: PlayDeveloperAPIClient, about purchase: PlayPurchaseData, logger: Logger) async throws -> Answer {
        try await askInRun(
            api, packageName: purchase.packageName, token: purchase.purchaseToken,
            subscription: purchase.autoRenewing != nil, logger: logger)
    }

    /// ``ask(_:packageName:token:subscription:logger:)`` for a run's stage: Google refusing the
    /// service account (401, 403) stops the run with a ``RunConfigurationError``.
    static func askInRun(
        _ api: PlayDeveloperAPIClient, packageName: String, token: String, subscription: Bool, logger: Logger
    ) async throws -> Answer {
        do {
            return try await ask(api, packageName: packageName, token: token, subscription: subscription, logger: logger)
        } catch let error as PlayAPIConfigurationError {
            throw RunConfigurationError("Google Play Developer API: \(error)")
        }
    }

    /// Asks about a purchase token: subscriptionsv2 when `subscription`, else productsv2. Google
    /// refusing the service account (401, 403) is thrown as the ``PlayAPIConfigurationError`` it
    /// is, for the caller to say: a run stops on it, the receiver keeps the notification.
    static func ask(
        _ api: PlayDeveloperAPIClient, packageName: String, token: String, subscription: Bool, logger: Logger
    ) async throws -> Answer {
        let now = Date()
        if subscription {
            switch try await api.subscriptionPurchase(packageName: packageName, token: token, logger: logger) {
            case .found(let subscription): return .state(PlayObservedState(subscription, at: now))
            case .notFound: return .unknownToGoogle
            case .gone: return .noLongerKept
            case .rejected(let status, let reason): return .retry("Google refused the request (\(status)): \(reason)")
            case .retryLater(let reason, _): return .retry(reason)
            }
        }
        switch try await api.productPurchase(packageName: packageName, token: token, logger: logger) {
        case .found(let product): return .state(PlayObservedState(product, at: now))
        case .notFound: return .unknownToGoogle
        case .gone: return .noLongerKept
        case .rejected(let status, let reason): return .retry("Google refused the request (\(status)): \(reason)")
        case .retryLater(let reason, _): return .retry(reason)
        }
    }
}

/// A purchase's state as the Developer API answered it, at the time it answered.
struct PlayObservedState: Sendable {
    var observedAt: Date
    var paid: Bool
    var cancelled: Bool
    var quantity: Int?
    var refundedQuantity: Int
    var acknowledged: Bool
    var test: Bool
    var accountID: String?
    /// What the answer says of the purchase itself, for a white row no upload brought (a
    /// notification's token): the order (a subscription's latest charge), the product, when it was
    /// paid, when a subscription's period ends.
    var orderID: String?
    var productID: String?
    var paidAt: Date?
    var expiresAt: Date?
    var subscription = false
    /// A subscription's `subscriptionState` (`SUBSCRIPTION_STATE_ACTIVE`, `…_EXPIRED`, …).
    var subscriptionState: String?

    /// A subscription whose first payment was pending and was then cancelled
    /// (developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2, SubscriptionState).
    static let pendingPurchaseCancelled = "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"

    init(_ product: ProductPurchaseV2, at date: Date) {
        observedAt = date
        paid = product.isPurchased
        cancelled = product.isCancelled
        quantity = product.quantity
        refundedQuantity = product.refundedQuantity
        acknowledged = product.isAcknowledged
        test = product.isTestPurchase
        accountID = product.obfuscatedExternalAccountId
        orderID = product.orderId
        productID = product.productLineItem?.lazy.compactMap(\.productId).first
        paidAt = product.completionDate
    }

    /// A subscription is paid while Google keeps it (its renewals' refunds come by the voided
    /// list, each renewal an order of its own), unless its first payment is still pending or was
    /// cancelled before it cleared (`SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED`: never paid,
    /// so revoked whole as a one-time product's `CANCELLED` is).
    init(_ subscription: SubscriptionPurchaseV2, at date: Date) {
        observedAt = date
        cancelled = subscription.subscriptionState == Self.pendingPurchaseCancelled
        paid = subscription.subscriptionState != "SUBSCRIPTION_STATE_PENDING" && !cancelled
        quantity = nil
        refundedQuantity = 0
        acknowledged = subscription.isAcknowledged
        test = subscription.isTestPurchase
        accountID = subscription.obfuscatedExternalAccountId
        orderID = subscription.latestSuccessfulOrderId
        productID = subscription.lineItems?.lazy.compactMap(\.productId).first
        paidAt = subscription.startDate
        expiresAt = subscription.lineItems?.lazy.compactMap(\.expiryDate).max()
        self.subscription = true
        subscriptionState = subscription.subscriptionState
    }
}

extension AppleTransactionRecord {
    /// What the Developer API said now, over what the signed purchaseData said when it was bought:
    /// signed at the answer's time, so it wins over the purchase (and a void still wins over it,
    /// `PlayVoids`). A cancelled purchase is revoked whole; fewer refundable units than bought is a
    /// partial refund of the difference.
    mutating func apply(_ state: PlayObservedState) {
        signedDate = state.observedAt
        source = .playAPI
        pending = !state.paid && !state.cancelled
        acknowledged = state.acknowledged
        if state.test { environment = .sandbox }
        if let account = state.accountID { obfuscatedAccountID = account }
        if let units = state.quantity { quantity = units }
        if state.cancelled || (state.refundedQuantity > 0 && state.refundedQuantity >= quantity) {
            revocationDate = state.observedAt
            refundedQuantity = nil
        } else if state.refundedQuantity > 0 {
            revocationDate = state.observedAt
            refundedQuantity = state.refundedQuantity
        }
    }
}

extension AppleTransactionRecord {
    /// A Play purchase as its signed `purchaseData` says, at the time of purchase: its order (the
    /// purchase token when Google gave none), the first order of its subscription as the original,
    /// a test purchase as Sandbox (SPEC section 18: environment_mismatch under production), a
    /// pending one not yet paid. Signed when bought, so any later source (the API, a void) wins.
    init(playPurchase purchase: PlayPurchaseData) {
        self.init(
            transactionID: purchase.transactionID, originalTransactionID: purchase.originalOrderID,
            productID: purchase.productID, productType: purchase.autoRenewing == nil ? nil : "auto_renewable",
            bundleID: purchase.packageName, environment: purchase.isTest ? .sandbox : .production,
            quantity: purchase.quantity, purchaseDate: purchase.purchaseTime, signedDate: purchase.purchaseTime,
            source: .playPurchase)
        store = .googlePlay
        obfuscatedAccountID = purchase.obfuscatedAccountID
        purchaseToken = purchase.purchaseToken
        acknowledged = purchase.acknowledged
        // Only a paid purchase (0) is judged; pending (4), or any state this build does not know, waits.
        pending = purchase.purchaseState != .purchased
    }
}
