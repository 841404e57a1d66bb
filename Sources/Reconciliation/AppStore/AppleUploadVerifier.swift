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
            return StoreUploadVerifier.unknownKind(upload.kind)
        }
    }

    // MARK: StoreKit 2

    func verifySignedTransaction(_ token: String) async -> Verdict {
        switch await jwsVerifier.verifyTransaction(token) {
        case .valid(let transaction):
            guard let record = AppleTransactionRecord(transaction, source: .jws) else {
                return .invalid(code: .jwsIncomplete, reason: "the signed transaction lacks its id, product or dates",
                                appleStatus: nil)
            }
            return .verified(VerifiedUpload(
                method: .jws, appleStatus: nil, environment: record.environment, bundleID: record.bundleID,
                transactions: [record]))
        case .invalid(.bundleIdNotAccepted(let bundle)):
            // Signature and chain verified before the bundle was looked at: a genuine transaction
            // of another app (SPEC: foreign_bundle), recorded without judging its transaction.
            return .verified(VerifiedUpload(
                method: .jws, appleStatus: nil, environment: AppStoreEnvironment(rawValue: ""), bundleID: bundle ?? "",
                transactions: []))
        case .invalid(let failure):
            return .invalid(code: VerificationFailure(failure), reason: failure.description, appleStatus: nil)
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
            return .verified(VerifiedUpload(
                method: .verifyReceipt, appleStatus: receipt.status,
                environment: receipt.environment, bundleID: receipt.bundleID,
                transactions: AppleTransactionRecord.rows(of: receipt)))
        case .invalid(let status, let reason):
            return .invalid(code: status.map(VerificationFailure.apple(status:)) ?? .notAReceipt, reason: reason, appleStatus: status)
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
            return .invalid(code: .receiptUnreadable, reason: "\(error)", appleStatus: nil)
        }
        guard case .app(let appReceipt) = receipt else {
            return .invalid(
                code: .ios6ReceiptOffline,
                reason: "iOS 6 transaction receipts can only be verified by verifyReceipt (RECONCILE_RECEIPT_VERIFICATION=apple)",
                appleStatus: nil)
        }
        if case .invalid(let failure) = await appReceipt.verifySignature(trustRoots: roots) {
            return .invalid(code: .receiptSignature, reason: "\(failure)", appleStatus: nil)
        }
        let info = appReceipt.payload
        guard let environment = info.environment?.store else {
            return .invalid(code: .receiptEnvironment,
                            reason: "receipt environment \(info.environment?.rawValue ?? "(none)") is not real money",
                            appleStatus: nil)
        }
        guard let bundle = info.bundleId else {
            return .invalid(code: .receiptIncomplete, reason: "the receipt has no bundle id", appleStatus: nil)
        }
        let records = AppleTransactionRecord.rows(of: info, bundleID: bundle, environment: environment)
        return .verified(VerifiedUpload(
            method: .localReceipt, appleStatus: nil, environment: environment, bundleID: bundle, transactions: records))
    }
}
