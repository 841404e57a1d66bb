import Postgres

extension Connection {
    /// Plants what the app stores when a StoreKit 2 client uploads a signed transaction: `jws`,
    /// claiming `transactionID`, by `user` (with the client's applicationUsername, if any), `age`
    /// ago (a PostgreSQL interval: `20 hours`). Needs the schema migrated.
    public func plantSignedTransactionUpload(
        _ jws: String, claiming transactionID: String, by user: String, username: String? = nil, age: String
    ) throws {
        try execute(
            """
            INSERT INTO reconcile.receipt_uploads
                (user_id, kind, payload, claimed_transaction_id, application_username, uploaded_at)
            VALUES ($1, 'signed_transaction', $2, $3, $4, now() - $5::interval)
            """, [user, jws, transactionID, username, age])
    }
}
