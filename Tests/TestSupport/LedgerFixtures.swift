import Postgres

extension Connection {
    /// Plants what the app's ledger holds when it credits a purchase: `quantity` of `product` to
    /// `user` for `transactionID`, `age` ago (a PostgreSQL interval: `20 hours`), with
    /// `consumedMilli` (thousandths of a percent) of it consumed when the app reports it. Needs the
    /// schema migrated.
    public func plantDelivery(
        _ transactionID: String, to user: String, product: String, quantity: Int = 1, consumedMilli: Int? = nil,
        age: String
    ) throws {
        try execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at, consumed_milli)
            VALUES ($1, $2, $3, $4, now() - $5::interval, $6)
            """, [transactionID, user, product, quantity, age, consumedMilli])
    }
}
