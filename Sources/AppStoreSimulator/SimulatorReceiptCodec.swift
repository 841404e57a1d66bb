import AppStore
import Foundation

/// Turns a ``SimulatedReceipt`` into the DER payload Apple signs, and reads it back out of a
/// signed receipt, with the AppStore module's receipt encoder and parser: the simulator's receipts
/// are read by exactly the code that reads Apple's.
enum SimulatorReceiptCodec {
    /// A receipt the simulator cannot answer for (not its layout, or no usable environment).
    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    /// The DER payload (SET of attributes) for `receipt`, whose defaults are already filled in.
    static func payload(for receipt: SimulatedReceipt) throws -> [UInt8] {
        let payload = AppReceipt.Payload(
            environment: receipt.environment == .production ? .production : .productionSandbox,
            appItemId: receipt.environment == .production ? 1_000_000_000 : 0,
            bundleId: receipt.bundleID,
            appVersion: receipt.applicationVersion,
            // Real receipts carry a per-device opaque value and hash; random bytes keep two
            // otherwise equal receipts distinct, as Apple's are.
            opaqueValue: (0..<16).map { _ in UInt8.random(in: 0...255) },
            sha1Hash: (0..<20).map { _ in UInt8.random(in: 0...255) },
            creationDate: receipt.creationDate,
            originalPurchaseDate: receipt.purchases.map(\.purchaseDate).min() ?? receipt.creationDate,
            originalAppVersion: receipt.originalApplicationVersion,
            inAppPurchases: receipt.purchases.map { purchase in
                AppReceipt.InAppPurchase(
                    quantity: purchase.quantity,
                    productId: purchase.productID,
                    transactionId: purchase.transactionID,
                    purchaseDate: purchase.purchaseDate,
                    originalTransactionId: purchase.originalTransactionID,
                    originalPurchaseDate: purchase.originalPurchaseDate,
                    expiresDate: purchase.expiresDate,
                    webOrderLineItemId: purchase.webOrderLineItemID ?? (purchase.expiresDate == nil ? 0 : nil),
                    cancellationDate: purchase.cancellationDate,
                    isTrialPeriod: purchase.expiresDate == nil ? nil : false,
                    isInIntroOfferPeriod: purchase.expiresDate == nil ? nil : false)
            })
        return try payload.derEncoded()
    }

    /// Reads a parsed receipt back into the simulator's terms.
    static func read(_ receipt: AppReceipt) throws -> SimulatedReceipt {
        let payload = receipt.payload
        guard let bundleID = payload.bundleId else { throw Unreadable(description: "no bundle id") }
        guard let environment = payload.environment.flatMap({ SimulatedReceipt.Environment(lenient: $0.rawValue) })
        else {
            throw Unreadable(description: "environment \(payload.environment?.rawValue ?? "missing")")
        }
        return SimulatedReceipt(
            bundleID: bundleID, environment: environment, applicationVersion: payload.appVersion,
            originalApplicationVersion: payload.originalAppVersion, creationDate: payload.creationDate,
            purchases: try payload.inAppPurchases.map { purchase in
                guard let productID = purchase.productId, let purchaseDate = purchase.purchaseDate else {
                    throw Unreadable(description: "an in-app purchase without product id or purchase date")
                }
                return SimulatedReceipt.Purchase(
                    productID: productID, transactionID: purchase.transactionId,
                    originalTransactionID: purchase.originalTransactionId, purchaseDate: purchaseDate,
                    originalPurchaseDate: purchase.originalPurchaseDate, quantity: purchase.quantity,
                    expiresDate: purchase.expiresDate, cancellationDate: purchase.cancellationDate,
                    // Apple writes 0 for "none" on non-subscriptions.
                    webOrderLineItemID: purchase.webOrderLineItemId.flatMap { $0 == 0 ? nil : $0 })
            })
    }
}
