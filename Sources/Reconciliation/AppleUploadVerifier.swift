import AppStore
import Foundation
import Logging

/// Verifies uploads with Apple's sources (SPEC section 3): app receipts through verifyReceipt
/// (or offline by their signature chain with `RECONCILE_RECEIPT_VERIFICATION=local`), StoreKit 2
/// JWS locally. Every upload ends as a `Verdict`; only a configuration Apple refuses throws.
public struct AppleUploadVerifier: UploadVerifier {
    let receiptClient: VerifyReceiptClient?
    /// Verifies StoreKit 2 JWS and notifications.
    public let jwsVerifier: SignedDataVerifier
    let roots: TrustedRoots
    let acceptedBundles: Set<String>
    let logger: Logger

    /// Creates a verifier. `receiptClient` nil verifies app receipts offline.
    public init(receiptClient: VerifyReceiptClient?, roots: TrustedRoots, bundleIDs: [String], logger: Logger) {
        self.receiptClient = receiptClient
        self.roots = roots
        acceptedBundles = Set(bundleIDs)
        // Sandbox is accepted here so that a tester's purchase is recorded and judged as
        // environment_mismatch rather than dropped; Xcode and LocalTesting are always refused.
        jwsVerifier = SignedDataVerifier(
            configuration: .init(trustedRoots: roots, bundleIds: Set(bundleIDs), environments: [.production, .sandbox]))
        self.logger = logger
    }

    public func verify(_ upload: Upload, attempt: Int) async throws -> Verdict {
        switch upload.kind {
        case .signedTransaction:
            return await verifySignedTransaction(upload.payload)
        case .appReceipt:
            if let receiptClient {
                return try await verifyWithApple(upload.payload, client: receiptClient)
            }
            return await verifyReceiptLocally(upload.payload)
        default:
            return .invalid(
                code: "unknown_kind", reason: "upload kind is neither app_receipt nor signed_transaction",
                appleStatus: nil)
        }
    }

    // MARK: StoreKit 2

    func verifySignedTransaction(_ token: String) async -> Verdict {
        switch await jwsVerifier.verifyTransaction(token) {
        case .valid(let transaction):
            guard let record = Self.record(transaction, source: .jws) else {
                return .invalid(code: "jws_incomplete", reason: "the signed transaction lacks its id, product or dates",
                                appleStatus: nil)
            }
            return .verified(VerifiedUpload(
                method: .jws, appleStatus: nil, environment: record.environment, bundleID: record.bundleID,
                transactions: [record]))
        case .invalid(.bundleIdNotAccepted(let bundle)):
            // Signature and chain verified before the bundle was looked at: a genuine transaction
            // of another app (SPEC: foreign_bundle), recorded without judging its transaction.
            return .verified(VerifiedUpload(
                method: .jws, appleStatus: nil, environment: AppStoreEnvironment(rawValue: ""), bundleID: bundle ?? "", transactions: []))
        case .invalid(let failure):
            return .invalid(code: Self.code(failure), reason: failure.description, appleStatus: nil)
        }
    }

    /// A verified JWS transaction as a white-table row; nil when Apple's payload lacks what the
    /// diff needs (which Apple never sends, but a verified payload is still not trusted blindly).
    public static func record(_ transaction: JWSTransaction, source: TransactionSource) -> AppleTransactionRecord? {
        guard let id = transaction.transactionId, let product = transaction.productId,
            let bundle = transaction.bundleId, let purchased = transaction.purchaseDate,
            let environment = transaction.environment
        else { return nil }
        return AppleTransactionRecord(
            transactionID: id, originalTransactionID: transaction.originalTransactionId ?? id, productID: product,
            productType: transaction.type.map(productType), bundleID: bundle, environment: environment,
            quantity: transaction.quantity ?? 1, purchaseDate: purchased,
            originalPurchaseDate: transaction.originalPurchaseDate, expiresDate: transaction.expiresDate,
            revocationDate: transaction.revocationDate, revocationReason: transaction.revocationReason.map(\.rawValue),
            ownershipType: transaction.inAppOwnershipType?.rawValue, appAccountToken: transaction.appAccountToken,
            webOrderLineItemID: transaction.webOrderLineItemId, priceMilli: transaction.price,
            currency: transaction.currency, storefront: transaction.storefront,
            revocationType: transaction.revocationType?.rawValue, revocationPercentage: transaction.revocationPercentage,
            appTransactionID: transaction.appTransactionId, signedDate: transaction.signedDate, source: source)
    }

    static func productType(_ type: ProductType) -> String {
        switch type {
        case .consumable: "consumable"
        case .nonConsumable: "non_consumable"
        case .autoRenewable: "auto_renewable"
        case .nonRenewing: "non_renewing"
        default: type.rawValue
        }
    }

    static func code(_ failure: JWSVerificationFailure) -> String {
        switch failure {
        case .tooLarge: "jws_too_large"
        case .malformed: "jws_malformed"
        case .unsupportedAlgorithm: "jws_unsupported_algorithm"
        case .missingCertificateChain: "jws_missing_x5c"
        case .wrongCertificateCount: "jws_x5c_count"
        case .malformedCertificate: "jws_bad_certificate"
        case .leafMissingAppleOID: "jws_leaf_oid"
        case .intermediateMissingAppleOID: "jws_intermediate_oid"
        case .untrustedChain: "jws_untrusted_chain"
        case .invalidSignature: "jws_bad_signature"
        case .undecodablePayload: "jws_undecodable_payload"
        case .bundleIdNotAccepted: "foreign_bundle"
        case .appAppleIdMismatch: "jws_app_apple_id"
        case .environmentNotAccepted: "jws_environment"
        case .nested(_, let inner): code(inner)
        }
    }

    // MARK: StoreKit 1, through verifyReceipt

    func verifyWithApple(_ payload: String, client: VerifyReceiptClient) async throws -> Verdict {
        let outcome: VerifyReceiptOutcome
        do {
            outcome = try await client.verify(receiptData: payload, logger: logger)
        } catch let error as VerifyReceiptConfigurationError {
            throw RunConfigurationError(error.description)
        }
        switch outcome {
        case .verified(let receipt):
            let signed = receipt.receiptCreationDate ?? receipt.requestDate ?? Date()
            let environment = AppStoreEnvironment(rawValue: receipt.environment.rawValue)
            let records = receipt.transactions.map { item in
                AppleTransactionRecord(
                    transactionID: item.transactionID, originalTransactionID: item.originalTransactionID ?? item.transactionID,
                    productID: item.productID, productType: nil, bundleID: receipt.bundleID, environment: environment,
                    quantity: item.quantity, purchaseDate: item.purchaseDate, originalPurchaseDate: item.originalPurchaseDate,
                    expiresDate: item.expiresDate, revocationDate: item.cancellationDate,
                    revocationReason: item.cancellationReason.flatMap { Int($0) },
                    ownershipType: item.inAppOwnershipType, appAccountToken: item.appAccountToken.flatMap { UUID(uuidString: $0) },
                    webOrderLineItemID: item.webOrderLineItemID, signedDate: signed, source: .verifyReceipt)
            }
            return .verified(VerifiedUpload(
                method: .verifyReceipt, appleStatus: receipt.status, environment: environment,
                bundleID: receipt.bundleID, transactions: records))
        case .invalid(let status, let reason):
            return .invalid(code: status.map { "apple_\($0)" } ?? "not_a_receipt", reason: reason, appleStatus: status)
        case .retryLater(let reason, let status):
            return .retry(reason: reason, appleStatus: status)
        }
    }

    // MARK: StoreKit 1, offline

    func verifyReceiptLocally(_ payload: String) async -> Verdict {
        let receipt: Receipt
        do {
            receipt = try Receipt(base64Encoded: payload)
        } catch {
            return .invalid(code: "receipt_unreadable", reason: "\(error)", appleStatus: nil)
        }
        guard case .app(let appReceipt) = receipt else {
            return .invalid(
                code: "ios6_receipt_offline",
                reason: "iOS 6 transaction receipts can only be verified by verifyReceipt (RECONCILE_RECEIPT_VERIFICATION=apple)",
                appleStatus: nil)
        }
        if case .invalid(let failure) = await appReceipt.verifySignature(trustRoots: roots) {
            return .invalid(code: "receipt_signature", reason: "\(failure)", appleStatus: nil)
        }
        let info = appReceipt.payload
        let environment: AppStoreEnvironment
        switch info.environment?.rawValue.lowercased() {
        case "production": environment = .production
        case "productionsandbox", "sandbox": environment = .sandbox
        default:
            return .invalid(code: "receipt_environment",
                            reason: "receipt environment \(info.environment?.rawValue ?? "(none)") is not real money",
                            appleStatus: nil)
        }
        guard let bundle = info.bundleId else {
            return .invalid(code: "receipt_incomplete", reason: "the receipt has no bundle id", appleStatus: nil)
        }
        let records = info.inAppPurchases.compactMap { item -> AppleTransactionRecord? in
            guard let id = item.transactionId, let product = item.productId, let purchased = item.purchaseDate else {
                return nil
            }
            return AppleTransactionRecord(
                transactionID: id, originalTransactionID: item.originalTransactionId ?? id, productID: product,
                bundleID: bundle, environment: environment, quantity: item.quantity ?? 1, purchaseDate: purchased,
                originalPurchaseDate: item.originalPurchaseDate, expiresDate: item.expiresDate,
                revocationDate: item.cancellationDate, webOrderLineItemID: item.webOrderLineItemId.map(String.init),
                signedDate: info.creationDate, source: .localReceipt)
        }
        return .verified(VerifiedUpload(
            method: .localReceipt, appleStatus: nil, environment: environment, bundleID: bundle, transactions: records))
    }
}
