import Foundation
import Postgres

/// Who carried a transaction to the job: an upload, or a Server API answer about its account.
struct Carrier: Sendable {
    var uploadID: Int64
    var userID: String
    /// The purchase binding the client sent, for the transaction it said it reported.
    var applicationUsername: String?
    var appAccountToken: UUID?

    /// The upload itself carried the record; its binding applies to the transaction it claimed
    /// (or to everything it carried when it claimed none).
    ///
    /// A Google Play purchase carries its own binding, signed (`obfuscatedAccountId`): that is the
    /// claim's username, and the upload row's own columns are never read for it.
    init(upload: Upload, record: AppleTransactionRecord) {
        uploadID = upload.id
        userID = upload.userID
        switch record.store {
        case .googlePlay:
            applicationUsername = record.obfuscatedAccountID
            appAccountToken = nil
        case .appStore:
            let claimed = upload.claimedTransactionID == nil || upload.claimedTransactionID == record.transactionID
            applicationUsername = claimed ? upload.applicationUsername : nil
            appAccountToken = claimed ? upload.appAccountToken : nil
        }
    }

    /// The Server API answered about the account that uploaded `uploadID`; no client binding.
    init(uploadID: Int64, userID: String) {
        self.uploadID = uploadID
        self.userID = userID
    }
}

/// Writes the white table: every Apple-confirmed transaction once, newer Apple data winning, and
/// who carried it (`reconcile.transaction_claims`). The claims' triggers (migration 0011) then
/// refresh the white rows' `claimed_by`, `claim_token` and `claim_usernames_name_uploader`: the
/// upsert locks the white rows before the claims are written, which is what lets two workers
/// recording one receipt for two accounts end with no single uploader.
enum TransactionStore {
    /// Upserts records and their claims through a COPY-loaded staging table (set-based).
    static func upsert(_ records: [(AppleTransactionRecord, Carrier?)], runID: Int64, on connection: Connection) throws {
        guard !records.isEmpty else { return }
        try connection.execute(SQL.stage)
        try connection.copyIn(SQL.copyIntoStage) { writer in
            for (record, carrier) in records {
                try writer.append([
                    record.transactionID, record.originalTransactionID, record.productID, record.productType,
                    record.bundleID, record.environment.rawValue, record.quantity, record.purchaseDate,
                    record.originalPurchaseDate, record.expiresDate, record.revocationDate, record.revocationReason,
                    record.ownershipType, record.appAccountToken, record.webOrderLineItemID, record.priceMilli,
                    record.currency, record.storefront, record.signedDate, record.source, carrier?.uploadID,
                    carrier?.userID, carrier?.applicationUsername, carrier?.appAccountToken, record.revocationType,
                    record.revocationPercentage, record.appTransactionID, record.store, record.obfuscatedAccountID,
                    record.purchaseToken, record.refundedQuantity, record.acknowledged, record.pending,
                ])
            }
        }
        try connection.execute(SQL.upsertStaged, ["run_id": runID])
        // Google's voids are sticky: whatever a Play source said of an order, its recorded voids
        // still revoke it (sql/play/apply_voids.sql).
        let play = records.filter { $0.0.store == .googlePlay }.map(\.0.transactionID)
        try PlayVoids.apply(orderIDs: Array(Set(play)), runID: runID, on: connection)
    }

    /// The white table's statements (`sql/transactions/`).
    enum SQL {
        static let stage: SQLFile = "transactions/stage.sql"
        static let copyIntoStage: SQLFile = "transactions/copy_into_stage.sql"
        static let upsertStaged: SQLFile = "transactions/upsert_staged.sql"
    }
}
