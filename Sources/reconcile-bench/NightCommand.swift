import AppStore
import AppStoreSimulator
import ArgumentParser
import Foundation
import Postgres
import Reconciliation

/// `reconcile-bench night`: one night's new work for SPEC section 12's "new work on a big
/// history" target. Adds `--uploads` purchases the job has not seen, each credited once in the
/// ledger, by accounts of their own: three in four a StoreKit 2 upload (a JWS signed by the
/// simulator's CA, bound to its buyer's account token), one in four (every fourth) a Google Play
/// upload (`play_purchase`: `purchaseData` and its signature with the simulator's licence key of
/// ``PlaySignaturesCommand/package``, bound by `obfuscatedAccountId` to its buyer's user id)
/// credited under its `GPA.` order id. The same command on the generated history and on an empty
/// database gives the same work, so the `reconcile run` that follows can be timed on both (with
/// `reconcile-bench play-settings`'s Google Play settings).
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
        let simulator = try AppStoreSimulator(
            configuration: .init(stateDirectory: sim.directory, playPackageNames: [PlaySignaturesCommand.package]))
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
        let at = { (index: Int) in purchased.addingTimeInterval(Double(index % 3600) / 10) }
        let play = try signPlayPurchases(simulator, at: at, userID: { userID($0 % accounts) })
        let signed = Date()
        var transactions: [(id: String, account: Int, product: String, at: Date, store: String?)] = []
        transactions.reserveCapacity(uploads)
        let stored = try connection.copyIn(SQL.copyUploads) { writer in
            for index in 0..<uploads {
                let account = index % accounts
                let (product, price) = products[index % products.count]
                let at = at(index)
                if let purchase = play[index] {
                    let payload = ["purchaseData": purchase.purchaseData, "signature": purchase.signature]
                    try writer.append([
                        userID(account), "play_purchase", String(decoding: try JSONEncoder().encode(payload), as: UTF8.self),
                        UUID?.none, purchase.orderId!, uploadedAt,
                    ])
                    transactions.append((purchase.orderId!, account, product, at, "google_play"))
                    continue
                }
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
                transactions.append((transaction.transactionId!, account, product, at, nil))
            }
        }
        try connection.copyIn(SQL.copyDeliveries) { writer in
            for transaction in transactions {
                try writer.append([
                    transaction.id, userID(transaction.account), transaction.product, 1,
                    transaction.at.addingTimeInterval(5), Date?.none, transaction.store,
                ])
            }
        }
        try connection.execute(SQL.analyze)
        Bench.log("night \(night): \(stored) uploads and deliveries (\(play.count) Google Play, signed in "
            + "\(Bench.seconds(signed.timeIntervalSince(started))) s) in \(Bench.seconds(Date().timeIntervalSince(started))) s")
    }

    /// Whether upload `index` of the night is a Google Play purchase: every fourth, a quarter of them.
    static func isPlay(_ index: Int) -> Bool { index % 4 == 3 }

    /// The night's Google Play purchases by upload index, made and signed by the simulator (an
    /// RSA-2048 signature each, the night's slowest part: on every core at once). Their tokens and
    /// order ids follow from `--night` and the index, so both databases get the same purchases.
    func signPlayPurchases(
        _ simulator: AppStoreSimulator, at: (Int) -> Date, userID: (Int) -> String
    ) throws -> [Int: CreatedPlayPurchase] {
        let requests = (0..<uploads).filter(Self.isPlay).map { index in
            let (product, price) = BenchWorld.consumables[index % BenchWorld.consumables.count]
            var request = PlayPurchaseRequest(
                packageName: PlaySignaturesCommand.package, productId: product, obfuscatedAccountId: userID(index),
                acknowledged: true, purchaseTimeMillis: at(index).millisecondsSince1970)
            request.orderId = String(
                format: "GPA.3300-%04d-%04d-%05d", night % 10_000, (index / 100_000) % 10_000, index % 100_000)
            request.purchaseToken = "night\(night)-play-\(index)-" + String(repeating: "t", count: 80)
            request.priceMicros = price * 1000
            request.currency = "CNY"
            return (index, request)
        }
        _ = try simulator.play.licenseKey(for: PlaySignaturesCommand.package)  // made or loaded once, here
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, requests.count))
        let results = Results(workers)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            results.set(worker, Result {
                try stride(from: worker, to: requests.count, by: workers).map { position in
                    (requests[position].0, try simulator.play.createPurchase(requests[position].1))
                }
            })
        }
        var purchases: [Int: CreatedPlayPurchase] = [:]
        for result in results.all {
            for (index, purchase) in try result.get() { purchases[index] = purchase }
        }
        return purchases
    }

    /// Each worker's purchases.
    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [Result<[(Int, CreatedPlayPurchase)], any Error>]

        init(_ count: Int) { results = Array(repeating: .success([]), count: count) }

        func set(_ worker: Int, _ result: Result<[(Int, CreatedPlayPurchase)], any Error>) {
            lock.withLock { results[worker] = result }
        }

        var all: [Result<[(Int, CreatedPlayPurchase)], any Error>] { lock.withLock { results } }
    }

    /// The night's statements (`sql/bench/`; its account tokens load as the history's).
    enum SQL {
        static let product: SQLFile = "bench/night_product.sql"
        static let copyUploads: SQLFile = "bench/copy_night_uploads.sql"
        static let copyDeliveries: SQLFile = "bench/copy_night_deliveries.sql"
        static let analyze: SQLFile = "bench/analyze_night.sql"
    }
}
