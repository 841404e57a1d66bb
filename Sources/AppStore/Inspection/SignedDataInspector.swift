import Foundation

/// Decodes and verifies one piece of App Store data offline for `reconcile inspect`: a StoreKit 2
/// JWS (transaction, renewal info or notification `signedPayload`), a notification HTTP body
/// (`{"signedPayload": …}`), or a base64 app receipt (its parsed contents and signature chain).
public struct SignedDataInspector: Sendable {
    /// What the input looks like, told apart by shape before anything is verified.
    public enum InputKind: Sendable, Hashable {
        /// A compact JWS.
        case jws
        /// A JSON object, read as a notification body.
        case notificationBody
        /// Anything else: read as a base64 receipt.
        case receipt
    }

    /// What verified.
    public enum Inspected: Sendable, Hashable {
        /// A signed transaction.
        case transaction(JWSTransaction)
        /// Signed renewal info.
        case renewalInfo(JWSRenewalInfo)
        /// A notification with its nested signed data.
        case notification(VerifiedNotification)
        /// An app receipt whose signature chain verified, as verifyReceipt would show it.
        case receipt(VerifiedReceipt)
    }

    /// The outcome: a value, since an invalid input is a normal answer of `inspect`.
    public enum Result: Sendable, Hashable {
        /// It verifies.
        case valid(Inspected)
        /// It does not, and why.
        case invalid(String)
    }

    /// The anchors (`APPLE_ROOT_CERTIFICATES` or the bundled roots).
    public var trustedRoots: TrustedRoots
    /// Bundle ids accepted; nil accepts the input's own (inspect shows any app's data).
    public var bundleIds: Set<String>?

    /// Creates an inspector.
    public init(trustedRoots: TrustedRoots = .apple, bundleIds: Set<String>? = nil) {
        self.trustedRoots = trustedRoots
        self.bundleIds = bundleIds
    }

    /// Tells the input kind from its shape.
    public static func kind(of text: String) -> InputKind {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("{") { return .notificationBody }
        // base64 receipts may hold "+" and "/" but never two dots; base64url JWS never hold "+".
        if trimmed.split(separator: ".", omittingEmptySubsequences: false).count == 3 && !trimmed.contains("+") {
            return .jws
        }
        return .receipt
    }

    /// Verifies a JWS or notification body (receipts: ``inspectReceipt(_:)``).
    public func inspectSignedData(_ text: String) async -> Result {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch Self.kind(of: trimmed) {
        case .notificationBody:
            let token = (try? JSONDecoder().decode(SignedNotificationBody.self, from: Data(trimmed.utf8)))?
                .signedPayload
            guard let token else { return .invalid("a JSON object without signedPayload is not a notification body") }
            return await inspectJWS(token)
        case .jws:
            return await inspectJWS(trimmed)
        case .receipt:
            return await inspectReceipt(trimmed)
        }
    }

    /// The payload kinds a JWS can carry, told apart by their fields.
    private struct Probe: Decodable {
        var notificationType: String?
        var transactionId: String?
        var autoRenewProductId: String?
        var bundleId: String?
        var data: NotificationData?
    }

    private func inspectJWS(_ token: String) async -> Result {
        let probe: Probe
        do {
            probe = try UnverifiedJWS.decodePayload(token, as: Probe.self)
        } catch let failure as JWSVerificationFailure {
            return .invalid(failure.description)
        } catch {
            return .invalid("payload undecodable: \(error)")
        }
        let ownBundle = probe.bundleId ?? probe.data?.bundleId
        let verifier = SignedDataVerifier(
            configuration: .init(
                trustedRoots: trustedRoots, bundleIds: bundleIds ?? Set([ownBundle].compactMap { $0 })))
        if probe.notificationType != nil {
            switch await verifier.verifyNotification(token) {
            case .valid(let notification): return .valid(.notification(notification))
            case .invalid(let failure): return .invalid(failure.description)
            }
        }
        if probe.transactionId == nil, probe.autoRenewProductId != nil {
            switch await verifier.verifyRenewalInfo(token) {
            case .valid(let info): return .valid(.renewalInfo(info))
            case .invalid(let failure): return .invalid(failure.description)
            }
        }
        switch await verifier.verifyTransaction(token) {
        case .valid(let transaction): return .valid(.transaction(transaction))
        case .invalid(let failure): return .invalid(failure.description)
        }
    }

    /// Parses a base64 app receipt and verifies its signature chain at its creation date.
    public func inspectReceipt(_ base64: String) async -> Result {
        let receipt: Receipt
        do {
            receipt = try Receipt(base64Encoded: base64)
        } catch {
            return .invalid("not a receipt: \(error)")
        }
        guard case .app(let appReceipt) = receipt else {
            return .invalid(
                "an iOS 6 style transaction receipt can only be verified by verifyReceipt (without --offline)")
        }
        if case .invalid(let failure) = await appReceipt.verifySignature(trustRoots: trustedRoots) {
            return .invalid("receipt signature: \(failure)")
        }
        let payload = appReceipt.payload
        guard let environment = payload.environment?.store else {
            return .invalid("receipt environment \(payload.environment?.rawValue ?? "(none)") is not real money")
        }
        guard let bundleID = payload.bundleId else { return .invalid("the receipt has no bundle id") }
        if let bundleIds, !bundleIds.contains(bundleID) { return .invalid("bundle id \(bundleID) not accepted") }
        let transactions = payload.inAppPurchases.compactMap { item -> VerifiedReceipt.Transaction? in
            guard let id = item.transactionId, let product = item.productId, let purchased = item.purchaseDate else {
                return nil
            }
            return VerifiedReceipt.Transaction(
                transactionID: id, originalTransactionID: item.originalTransactionId, productID: product,
                quantity: item.quantity ?? 1, purchaseDate: purchased, originalPurchaseDate: item.originalPurchaseDate,
                expiresDate: item.expiresDate, cancellationDate: item.cancellationDate,
                webOrderLineItemID: item.webOrderLineItemId.map(String.init), isTrialPeriod: item.isTrialPeriod,
                isInIntroOfferPeriod: item.isInIntroOfferPeriod, promotionalOfferID: item.promotionalOfferId)
        }
        return .valid(
            .receipt(
                VerifiedReceipt(
                    status: 0, environment: environment, bundleID: bundleID, applicationVersion: payload.appVersion,
                    originalApplicationVersion: payload.originalAppVersion, receiptType: payload.environment?.rawValue,
                    appItemID: payload.appItemId.map(String.init), receiptCreationDate: payload.creationDate,
                    originalPurchaseDate: payload.originalPurchaseDate, inApp: transactions,
                    latestReceiptInfo: transactions.sorted { $0.purchaseDate < $1.purchaseDate })))
    }
}

extension SignedDataInspector.Inspected {
    /// The decoded data as JSON with Apple's field names (epoch-millisecond dates for StoreKit 2,
    /// verifyReceipt's names for receipts). A notification prints its payload with the nested
    /// signed data decoded beside it (`transactionInfo`, `renewalInfo`).
    public func json() throws -> Data {
        let encoder = AppStoreJSON.encoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        switch self {
        case .transaction(let transaction): return try encoder.encode(transaction)
        case .renewalInfo(let info): return try encoder.encode(info)
        case .notification(let notification):
            return try encoder.encode(
                InspectedNotification(
                    notification: notification.payload, transactionInfo: notification.transaction,
                    renewalInfo: notification.renewalInfo))
        case .receipt(let receipt):
            let plain = JSONEncoder()
            plain.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            return try plain.encode(receipt)
        }
    }

    private struct InspectedNotification: Encodable {
        var notification: NotificationPayload
        var transactionInfo: JWSTransaction?
        var renewalInfo: JWSRenewalInfo?
    }
}
