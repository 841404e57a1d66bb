import AppStore
import Foundation
import Postgres

// The picture assembled from the rows of `sql/diff/90_picture.sql` and `91_picture_details.sql`
// (`Differ.picture`); CustomerPicture.swift holds the model, DeskQuery.swift what a lookup starts from.

extension CustomerPicture.Transaction {
    /// A column's value as one of the closed sets the queue stores (a kind, a status, a
    /// resolution); a value this build does not know is a decoding error that names it.
    static func typed<T: RawRepresentable<String>>(_ row: Row, _ column: String) throws -> T {
        try typed(try row.decode(String.self, column), column)
    }

    static func typed<T: RawRepresentable<String>>(_ raw: String, _ column: String) throws -> T {
        guard let value = T(rawValue: raw) else {
            throw PostgresError(kind: .decoding, message: "review item has unknown \(column) \(raw)")
        }
        return value
    }

    /// The transactions of `sql/diff/90_picture.sql`, in order, without their details.
    static func assemble(transactions: [Row]) throws -> [Self] {
        try transactions.map { row in
            let id = try row.decode(String.self, "transaction_id")
            let sources = try row.decode(String.self, "sources")
            return Self(
                transactionID: id, originalTransactionID: try row["original_transaction_id"],
                productID: try row["product_id"], productType: try row["product_type"],
                bundleID: try row["bundle_id"], purchaseDate: try row["purchase_date"],
                quantity: try row["quantity"],
                environment: try row.decode(String?.self, "environment").map(AppStoreEnvironment.init(rawValue:)),
                revocationDate: try row["revocation_date"], revocationReason: try row["revocation_reason"],
                revocationType: try row["revocation_type"],
                revocationPercentage: try row["revocation_percentage"],
                priceMilli: try row["price_milli"], currency: try row["currency"],
                store: Store(rawValue: try row.decode(String.self, "store")) ?? .appStore,
                sources: sources.isEmpty ? [] : sources.split(separator: ",").map { TransactionSource(rawValue: String($0)) },
                buyer: CustomerPicture.Buyer(userID: try row["buyer"], basis: try row["basis"]),
                deliveries: [], uploads: [], reviewItems: [],
                verdict: try row["verdict"])
        }
    }

    /// `transactions` with the ledger rows, uploads and review items of
    /// `sql/diff/91_picture_details.sql`'s three results (each keyed by transaction id; a
    /// transaction whose details were not read has none).
    static func attaching(
        deliveries: [Row], uploads: [Row], reviewItems: [Row], to transactions: [Self]
    ) throws -> [Self] {
        var deliveriesByID: [String: [CustomerPicture.Delivery]] = [:]
        for row in deliveries {
            deliveriesByID[try row.decode(String.self, "transaction_id"), default: []].append(
                CustomerPicture.Delivery(
                    id: try row["id"], userID: try row["user_id"], productID: try row["product_id"],
                    quantity: try row["quantity"], deliveredAt: try row["delivered_at"],
                    revokedAt: try row["revoked_at"]))
        }
        var uploadsByID: [String: [CustomerPicture.Upload]] = [:]
        for row in uploads {
            uploadsByID[try row.decode(String.self, "transaction_id"), default: []].append(
                CustomerPicture.Upload(
                    id: try row["id"], userID: try row["user_id"], kind: try row["kind"],
                    uploadedAt: try row["uploaded_at"],
                    applicationUsername: try row["application_username"],
                    appAccountToken: try row["app_account_token"],
                    claimedTransactionID: try row["claimed_transaction_id"],
                    verification: try row["verification"], appleStatus: try row["apple_status"],
                    error: try row["error"]))
        }
        var itemsByID: [String: [CustomerPicture.ReviewItemSummary]] = [:]
        for row in reviewItems {
            itemsByID[try row.decode(String.self, "transaction_id"), default: []].append(
                CustomerPicture.ReviewItemSummary(
                    id: try row["id"], kind: try Self.typed(row, "kind"), status: try Self.typed(row, "status"),
                    severity: Severity(rawValue: try row["severity"]), suggestedAction: try row["suggested_action"],
                    resolution: try row["resolution", as: String?.self].map { try Self.typed($0, "resolution") },
                    assignee: try row["assignee"]))
        }
        return transactions.map { transaction in
            var transaction = transaction
            let id = transaction.transactionID
            transaction.deliveries = deliveriesByID[id] ?? []
            transaction.uploads = uploadsByID[id] ?? []
            transaction.reviewItems = itemsByID[id] ?? []
            return transaction
        }
    }
}
