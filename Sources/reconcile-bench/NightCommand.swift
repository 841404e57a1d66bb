import AppStore
import AppStoreSimulator
import ArgumentParser
import Foundation
import Postgres
import Reconciliation

/// `reconcile-bench night`: one night's new work for SPEC section 12's "new work on a big
/// history" target. Adds `--uploads` purchases the job has not seen, each a StoreKit 2 upload
/// (a JWS signed by the simulator's CA, bound to its buyer's account token) credited once in the
/// ledger, by accounts of their own. The same command on the generated history and on an empty
/// database gives the same work, so the `reconcile run` that follows can be timed on both.
struct NightCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "night", abstract: "Add one night of new purchases, uploads and deliveries (COPY).")

    @OptionGroup var sim: SimulatorStateOptions

    @Option(help: "New purchases, each with its upload and its delivery.")
    var uploads = 50_000

    @Option(help: "Distinguishes the purchases and accounts of one night from another's.")
    var night = 1

    func run() throws {
        let connection = try Connection(url: ProcessInfo.processInfo.environment["DATABASE_URL"])
        let simulator = try sim.simulator()
        // Bought before RECONCILE_GRACE (30 minutes), so that the run judges them tonight, and
        // uploaded since the last run, whose window starts where the last one ended.
        let uploadedAt = Date()
        let purchased = Date(millisecondsSince1970: uploadedAt.addingTimeInterval(-2 * 3600).millisecondsSince1970)
        let accounts = max(1, uploads / 10)
        let userID = { (account: Int) in "night\(night)-user-\(account)" }
        let token = { (account: Int) in
            UUID(uuidString: String(format: "%08x-0000-4000-8000-%012x", night, account))!
        }
        let products = BenchWorld.consumables

        for (product, price) in products {
            try connection.execute(SQL.product, ["product_id": product, "price_milli": price])
        }
        try connection.copyIn(HistoryWriter.SQL.copyAccountTokens) { writer in
            for account in 0..<accounts { try writer.append([token(account), userID(account)]) }
        }

        let started = Date()
        var transactions: [(id: String, account: Int, product: String, at: Date)] = []
        transactions.reserveCapacity(uploads)
        let stored = try connection.copyIn(SQL.copyUploads) { writer in
            for index in 0..<uploads {
                let account = index % accounts
                let (product, price) = products[index % products.count]
                let at = purchased.addingTimeInterval(Double(index % 3600) / 10)
                var transaction = JWSTransaction()
                transaction.transactionId = String(6_000_000_000_000_000 + night * 100_000_000 + index)
                transaction.originalTransactionId = transaction.transactionId
                transaction.bundleId = BenchWorld.bundle
                transaction.productId = product
                transaction.type = .consumable
                transaction.quantity = 1
                transaction.purchaseDate = at
                transaction.originalPurchaseDate = at
                transaction.signedDate = at
                transaction.appAccountToken = token(account)
                transaction.inAppOwnershipType = .purchased
                transaction.environment = .production
                transaction.storefront = "CHN"
                transaction.storefrontId = "143465"
                transaction.transactionReason = .purchase
                transaction.price = price
                transaction.currency = "CNY"
                try writer.append([
                    userID(account), "signed_transaction", try simulator.ca.signJWS(transaction), token(account),
                    transaction.transactionId, uploadedAt,
                ])
                transactions.append((transaction.transactionId!, account, product, at))
            }
        }
        try connection.copyIn(HistoryWriter.SQL.copyDeliveries) { writer in
            for transaction in transactions {
                try writer.append([
                    transaction.id, userID(transaction.account), transaction.product, 1,
                    transaction.at.addingTimeInterval(5), Date?.none,
                ])
            }
        }
        try connection.execute(SQL.analyze)
        Bench.log("night \(night): \(stored) uploads and deliveries in \(Bench.seconds(Date().timeIntervalSince(started))) s")
    }

    /// The night's statements (`sql/bench/`; its account tokens and deliveries load as the history's).
    enum SQL {
        static let product: SQLFile = "bench/night_product.sql"
        static let copyUploads: SQLFile = "bench/copy_night_uploads.sql"
        static let analyze: SQLFile = "bench/analyze_night.sql"
    }
}
