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
    init(upload: Upload, record: AppleTransactionRecord) {
        uploadID = upload.id
        userID = upload.userID
        let claimed = upload.claimedTransactionID == nil || upload.claimedTransactionID == record.transactionID
        applicationUsername = claimed ? upload.applicationUsername : nil
        appAccountToken = claimed ? upload.appAccountToken : nil
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
        try connection.execute(
            """
            CREATE TEMP TABLE IF NOT EXISTS stage_transactions (
                transaction_id text, original_transaction_id text, product_id text, product_type text,
                bundle_id text, environment text, quantity integer, purchase_date timestamptz,
                original_purchase_date timestamptz, expires_date timestamptz, revocation_date timestamptz,
                revocation_reason integer, ownership_type text, app_account_token uuid, web_order_line_item_id text,
                price_milli bigint, currency text, storefront text, signed_date timestamptz, source text,
                upload_id bigint, user_id text, application_username text, claim_token uuid,
                revocation_type text, revocation_percentage integer, app_transaction_id text
            )
            """)
        try connection.execute("TRUNCATE stage_transactions")
        try connection.copyIn("COPY stage_transactions FROM STDIN") { writer in
            for (record, carrier) in records {
                try writer.append([
                    record.transactionID, record.originalTransactionID, record.productID, record.productType,
                    record.bundleID, record.environment.rawValue, record.quantity, record.purchaseDate,
                    record.originalPurchaseDate, record.expiresDate, record.revocationDate, record.revocationReason,
                    record.ownershipType, record.appAccountToken, record.webOrderLineItemID, record.priceMilli,
                    record.currency, record.storefront, record.signedDate, record.source, carrier?.uploadID,
                    carrier?.userID, carrier?.applicationUsername, carrier?.appAccountToken, record.revocationType,
                    record.revocationPercentage, record.appTransactionID,
                ])
            }
        }
        // Newer Apple data wins; what only some sources carry (price, token) is kept.
        let newer = "(EXCLUDED.signed_date >= coalesce(a.signed_date, '-infinity'::timestamptz))"
        try connection.execute(
            """
            INSERT INTO reconcile.apple_transactions AS a
                (transaction_id, original_transaction_id, product_id, product_type, bundle_id, environment, quantity,
                 purchase_date, original_purchase_date, expires_date, revocation_date, revocation_reason,
                 ownership_type, app_account_token, web_order_line_item_id, price_milli, currency, storefront,
                 signed_date, source, first_seen_run, last_seen_run, revocation_type, revocation_percentage,
                 app_transaction_id)
            SELECT DISTINCT ON (transaction_id)
                   transaction_id, original_transaction_id, product_id, product_type, bundle_id, environment, quantity,
                   purchase_date, original_purchase_date, expires_date, revocation_date, revocation_reason,
                   ownership_type, app_account_token, web_order_line_item_id, price_milli, currency, storefront,
                   signed_date, source, $1, $1, revocation_type, revocation_percentage, app_transaction_id
              FROM stage_transactions
             ORDER BY transaction_id, signed_date DESC NULLS LAST
            ON CONFLICT (transaction_id) DO UPDATE SET
                original_transaction_id = CASE WHEN \(newer) THEN EXCLUDED.original_transaction_id ELSE a.original_transaction_id END,
                product_id = CASE WHEN \(newer) THEN EXCLUDED.product_id ELSE a.product_id END,
                product_type = coalesce(CASE WHEN \(newer) THEN EXCLUDED.product_type END, a.product_type, EXCLUDED.product_type),
                bundle_id = CASE WHEN \(newer) THEN EXCLUDED.bundle_id ELSE a.bundle_id END,
                environment = CASE WHEN \(newer) THEN EXCLUDED.environment ELSE a.environment END,
                quantity = CASE WHEN \(newer) THEN EXCLUDED.quantity ELSE a.quantity END,
                purchase_date = CASE WHEN \(newer) THEN EXCLUDED.purchase_date ELSE a.purchase_date END,
                original_purchase_date = coalesce(a.original_purchase_date, EXCLUDED.original_purchase_date),
                expires_date = CASE WHEN \(newer) THEN coalesce(EXCLUDED.expires_date, a.expires_date) ELSE a.expires_date END,
                revocation_date = CASE WHEN \(newer) THEN EXCLUDED.revocation_date ELSE a.revocation_date END,
                revocation_reason = CASE WHEN \(newer) THEN EXCLUDED.revocation_reason ELSE a.revocation_reason END,
                -- Only StoreKit 2 sources carry these; a newer receipt (which has none) keeps what they said
                -- about a revocation it confirms, and a reversed refund (no revocation date) clears them.
                revocation_type = CASE WHEN \(newer) AND EXCLUDED.revocation_date IS NULL THEN NULL
                                       WHEN \(newer) THEN coalesce(EXCLUDED.revocation_type, a.revocation_type)
                                       ELSE a.revocation_type END,
                revocation_percentage = CASE WHEN \(newer) AND EXCLUDED.revocation_date IS NULL THEN NULL
                                             WHEN \(newer) AND EXCLUDED.revocation_type IS NOT NULL
                                             THEN EXCLUDED.revocation_percentage
                                             ELSE a.revocation_percentage END,
                app_transaction_id = coalesce(a.app_transaction_id, EXCLUDED.app_transaction_id),
                ownership_type = coalesce(CASE WHEN \(newer) THEN EXCLUDED.ownership_type END, a.ownership_type, EXCLUDED.ownership_type),
                app_account_token = coalesce(a.app_account_token, EXCLUDED.app_account_token),
                web_order_line_item_id = coalesce(a.web_order_line_item_id, EXCLUDED.web_order_line_item_id),
                price_milli = coalesce(CASE WHEN \(newer) THEN EXCLUDED.price_milli END, a.price_milli, EXCLUDED.price_milli),
                currency = coalesce(CASE WHEN \(newer) THEN EXCLUDED.currency END, a.currency, EXCLUDED.currency),
                storefront = coalesce(CASE WHEN \(newer) THEN EXCLUDED.storefront END, a.storefront, EXCLUDED.storefront),
                signed_date = greatest(a.signed_date, EXCLUDED.signed_date),
                source = CASE WHEN \(newer) THEN EXCLUDED.source ELSE a.source END,
                last_seen_run = EXCLUDED.last_seen_run,
                last_seen_at = now()
            """, [runID])
        try connection.execute(
            """
            INSERT INTO reconcile.transaction_claims
                (transaction_id, upload_id, user_id, application_username, app_account_token, source, run_id)
            SELECT DISTINCT ON (transaction_id, upload_id)
                   transaction_id, upload_id, user_id, application_username, claim_token, source, $1
              FROM stage_transactions WHERE upload_id IS NOT NULL
            ON CONFLICT (transaction_id, upload_id) DO NOTHING
            """, [runID])
    }
}
