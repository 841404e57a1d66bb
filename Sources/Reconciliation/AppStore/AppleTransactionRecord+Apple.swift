import AppStore
import Foundation

/// The one place Apple's three shapes of a transaction become a white-table row: a verifyReceipt
/// answer, an app receipt's payload read offline, and a verified JWS transaction (an upload, a
/// Server API answer, a notification). The uploads' verifier, the Server API lookups, the
/// notifications and the desk all map through here.
extension AppleTransactionRecord {
    /// A verified JWS transaction as a row; nil when Apple's payload lacks what the diff needs
    /// (which Apple never sends, but a verified payload is still not trusted blindly).
    public init?(_ transaction: JWSTransaction, source: TransactionSource) {
        guard let id = transaction.transactionId, let product = transaction.productId,
            let bundle = transaction.bundleId, let purchased = transaction.purchaseDate,
            let environment = transaction.environment
        else { return nil }
        self.init(
            transactionID: id, originalTransactionID: transaction.originalTransactionId ?? id, productID: product,
            productType: transaction.type.map(Self.productType), bundleID: bundle, environment: environment,
            quantity: transaction.quantity ?? 1, purchaseDate: purchased,
            originalPurchaseDate: transaction.originalPurchaseDate, expiresDate: transaction.expiresDate,
            revocationDate: transaction.revocationDate, revocationReason: transaction.revocationReason.map(\.rawValue),
            ownershipType: transaction.inAppOwnershipType?.rawValue, appAccountToken: transaction.appAccountToken,
            webOrderLineItemID: transaction.webOrderLineItemId, priceMilli: transaction.price,
            currency: transaction.currency, storefront: transaction.storefront,
            revocationType: transaction.revocationType?.rawValue, revocationPercentage: transaction.revocationPercentage,
            appTransactionID: transaction.appTransactionId, signedDate: transaction.signedDate, source: source)
    }

    /// Every transaction verifyReceipt listed for a receipt, as rows. The receipt's creation time
    /// stands in for `signedDate`: newer data wins.
    static func rows(of receipt: VerifiedReceipt) -> [AppleTransactionRecord] {
        let signed = receipt.receiptCreationDate ?? receipt.requestDate ?? Date()
        let environment = receipt.environment
        return receipt.transactions.map { item in
            AppleTransactionRecord(
                transactionID: item.transactionID, originalTransactionID: item.originalTransactionID ?? item.transactionID,
                productID: item.productID, productType: nil, bundleID: receipt.bundleID, environment: environment,
                quantity: item.quantity, purchaseDate: item.purchaseDate, originalPurchaseDate: item.originalPurchaseDate,
                expiresDate: item.expiresDate, revocationDate: item.cancellationDate,
                revocationReason: item.cancellationReason.flatMap { Int($0) },
                ownershipType: item.inAppOwnershipType, appAccountToken: item.appAccountToken.flatMap { UUID(uuidString: $0) },
                webOrderLineItemID: item.webOrderLineItemID, signedDate: signed, source: .verifyReceipt)
        }
    }

    /// The in-app purchases of an app receipt read offline, as rows; a purchase without its id,
    /// product or date is left out.
    static func rows(of receipt: AppReceipt.Payload, bundleID: String, environment: AppStoreEnvironment)
        -> [AppleTransactionRecord]
    {
        receipt.inAppPurchases.compactMap { item -> AppleTransactionRecord? in
            guard let id = item.transactionId, let product = item.productId, let purchased = item.purchaseDate else {
                return nil
            }
            return AppleTransactionRecord(
                transactionID: id, originalTransactionID: item.originalTransactionId ?? id, productID: product,
                bundleID: bundleID, environment: environment, quantity: item.quantity ?? 1, purchaseDate: purchased,
                originalPurchaseDate: item.originalPurchaseDate, expiresDate: item.expiresDate,
                revocationDate: item.cancellationDate, webOrderLineItemID: item.webOrderLineItemId.map(String.init),
                signedDate: receipt.creationDate, source: .localReceipt)
        }
    }

    /// SPEC's spelling of a product type (`non_consumable`); a type Apple adds later is kept as sent.
    static func productType(_ type: ProductType) -> String {
        switch type {
        case .consumable: "consumable"
        case .nonConsumable: "non_consumable"
        case .autoRenewable: "auto_renewable"
        case .nonRenewing: "non_renewing"
        default: type.rawValue
        }
    }
}
