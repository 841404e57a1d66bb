import AppStoreSimulator
import Foundation
import Postgres

extension Connection {
    /// A 3-pack (`coins3` of `com.hncs.szj`) bought a day ago from `sim` by `customer` (an Apple
    /// ID) for the app account `user`, uploaded as a signed transaction and credited 20 hours ago,
    /// `consumedMilli` of it consumed when given: the purchase the refund-request tests ask about.
    /// Needs the schema migrated.
    public func plantDeliveredPack(
        from sim: AppStoreSimulator, for user: String, customer: String, consumedMilli: Int? = nil
    ) throws -> CreatedTransaction {
        let bought = try sim.createTransaction(SimulatedTransaction(
            productId: "coins3", customer: customer, bundleId: "com.hncs.szj", environment: .production,
            type: .consumable, quantity: 3, purchaseDate: Date().addingTimeInterval(-86_400), price: 90_000,
            currency: "CNY"))
        try plantSignedTransactionUpload(
            bought.signedTransaction, claiming: bought.transactionId, by: user, age: "20 hours")
        try plantDelivery(
            bought.transactionId, to: user, product: "coins3", quantity: 3, consumedMilli: consumedMilli,
            age: "20 hours")
        return bought
    }
}
