import AppStore
import AppStoreSimulator
import ArgumentParser
import Foundation
import Postgres
import Reconciliation

/// `reconcile-bench generate`: writes the ``BenchWorld`` history into a migrated database, one
/// COPY per table, and prints how many rows each table received.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Fill a migrated, empty database with the benchmark's history (COPY, one pass per table).")

    @Option(help: "Apple transactions in the history (deliveries are about as many).")
    var transactions = 5_000_000

    @OptionGroup var sim: SimulatorStateOptions

    @Option(help: "Random seed; the same seed gives the same history.")
    var seed: UInt64 = 12

    func run() throws {
        let connection = try Connection(url: ProcessInfo.processInfo.environment["DATABASE_URL"])
        guard try connection.queryFirst(HistoryWriter.SQL.anyAppleTransaction) == nil else {
            throw ValidationError("the database already holds Apple transactions; generate into an empty one")
        }
        let simulator = try sim.simulator()
        let world = BenchWorld(transactions: transactions, seed: seed, now: Date())
        let writer = HistoryWriter(world: world, ca: simulator.ca, connection: connection)
        for table in HistoryWriter.Table.allCases {
            let started = Date()
            let rows = try writer.write(table)
            Bench.log("\(table.rawValue): \(rows) rows in \(Bench.seconds(Date().timeIntervalSince(started))) s")
            Bench.emit("data_\(table.rawValue)_rows", "\(rows)")
        }
        let started = Date()
        try writer.finish()
        Bench.log("sequences, VACUUM ANALYZE in \(Bench.seconds(Date().timeIntervalSince(started))) s")
    }
}

/// Writes one table of the history per call.
struct HistoryWriter {
    /// The tables, in the order they are written.
    enum Table: String, CaseIterable {
        case products, account_tokens, apple_transactions, receipt_uploads, upload_verifications
        case transaction_claims, deliveries
    }

    /// SQL NULL in a COPY row.
    static let null: String? = nil

    let world: BenchWorld
    let ca: SimulatorCA
    let connection: Connection

    /// Upload ids: the purchase's own upload is its index + 1; a shared receipt's second upload
    /// comes after all of those.
    func uploadID(_ purchase: BenchWorld.Purchase, second: Bool = false) -> Int64 {
        Int64(second ? world.transactions + purchase.index + 1 : purchase.index + 1)
    }

    /// Loads one table the way bulk loads are done: its secondary indexes are dropped first and
    /// built again afterwards, which sorts each once instead of inserting millions of random keys.
    func write(_ table: Table) throws -> Int {
        let indexes = try connection.query(SQL.secondaryIndexes, ["table": table.rawValue])
            .map { (drop: try $0.decode(String.self, at: 0), build: try $0.decode(String.self, at: 1)) }
        for index in indexes { try connection.execute(index.drop) }
        let rows: Int
        if table == .transaction_claims {
            // The white rows were written with their claims' facts (migrations 0011, 0013): the
            // trigger that keeps them would write millions of rows a second time. Checked
            // afterwards against the facts' one definition, the view reconcile.claim_facts.
            try connection.execute(SQL.claimsTriggerOff)
            rows = try copy(table)
            try connection.execute(SQL.claimsTriggerOn)
            try checkClaimFacts()
        } else {
            rows = try copy(table)
        }
        for index in indexes { try connection.execute(index.build) }
        return rows
    }

    /// The facts written with the white rows are those of their claims, as the view
    /// `reconcile.claim_facts` (migration 0013) defines them and the claims' trigger writes them.
    private func checkClaimFacts() throws {
        let wrong = try connection.query(SQL.claimFactsDiffering)[0].decode(Int.self, at: 0)
        guard wrong == 0 else { throw ValidationError("\(wrong) white rows were generated with other facts than their claims'") }
    }

    private func copy(_ table: Table) throws -> Int {
        switch table {
        case .products:
            return try connection.copyIn(SQL.copyProducts) { writer in
                for (product, price) in BenchWorld.consumables {
                    try writer.append([product, "consumable", price, "CNY"])
                }
                for (product, price) in BenchWorld.unlocks {
                    try writer.append([product, "non_consumable", price, "CNY"])
                }
                for (product, price) in BenchWorld.subscriptions {
                    try writer.append([product, "auto_renewable", price, "CNY"])
                }
            }
        case .account_tokens:
            return try connection.copyIn(SQL.copyAccountTokens) { writer in
                // StoreKit 2 clients (even accounts) bind their purchases with a token per account.
                for user in stride(from: 0, to: world.users, by: 2) {
                    try writer.append([world.accountToken(user), world.userID(user)])
                }
            }
        case .apple_transactions:
            return try copyTransactions()
        case .receipt_uploads:
            return try copyUploads()
        case .upload_verifications:
            return try copyVerifications()
        case .transaction_claims:
            return try copyClaims()
        case .deliveries:
            return try connection.copyIn(SQL.copyDeliveries) { writer in
                for index in 0..<world.transactions {
                    for delivery in world.deliveries(world.purchase(index)) {
                        try writer.append([
                            delivery.transactionID, world.userID(delivery.user), delivery.productID, delivery.quantity,
                            delivery.deliveredAt, delivery.revokedAt,
                        ])
                    }
                }
            }
        }
    }

    /// Identity sequences past the explicit ids, and fresh statistics for the planner.
    func finish() throws {
        try connection.execute(SQL.finishHistory)
    }

    /// Copies `file`'s rows for each purchase the job knew before the bench's run; those uploaded
    /// since (no Apple transaction, verification or claim yet) are left for the run to verify.
    private func copyKnownPurchases(
        _ file: SQLFile, _ rows: (BenchWorld.Purchase, inout CopyWriter) throws -> Void
    ) throws -> Int {
        try connection.copyIn(file) { writer in
            for index in 0..<world.transactions {
                let purchase = world.purchase(index)
                guard purchase.isKnownToJob else { continue }
                try rows(purchase, &writer)
            }
        }
    }

    private func copyTransactions() throws -> Int {
        try copyKnownPurchases(SQL.copyAppleTransactions) { purchase, writer in
            let type: String =
                switch purchase.category {
                case .consumable: "consumable"
                case .unlock: "non_consumable"
                case .subscription: "auto_renewable"
                }
            let seen = purchase.purchaseDate.addingTimeInterval(3600)
            // What copyClaims writes: the uploader's claim (a StoreKit 2 token, or a hashed
            // username naming the buyer), and for a shared receipt a bare claim by another account.
            let shared = purchase.fate == .shared && purchase.other != purchase.uploader
            // StoreKit 2 data carries price and token; verifyReceipt answers carry neither.
            try writer.append([
                purchase.transactionID, purchase.originalTransactionID, purchase.productID, type,
                purchase.bundleID, purchase.environment, purchase.quantity, purchase.purchaseDate,
                purchase.isFollowUp ? nil : purchase.purchaseDate, purchase.expiresDate, purchase.revocationDate,
                purchase.revocationDate == nil ? Int?.none : 0, "PURCHASED",
                purchase.storeKit2 ? world.accountToken(purchase.buyer) : nil,
                purchase.category == .subscription ? String(purchase.index + 1_000_000_000) : nil,
                purchase.storeKit2 ? purchase.price * Int64(purchase.quantity) : nil,
                purchase.storeKit2 ? "CNY" : nil, purchase.storeKit2 ? "CHN" : nil,
                purchase.revocationDate ?? purchase.purchaseDate.addingTimeInterval(2),
                purchase.storeKit2 ? "jws" : "verify_receipt", seen, seen,
                shared ? nil : world.userID(purchase.uploader),
                purchase.storeKit2 ? world.accountToken(purchase.buyer) : nil,
                purchase.storeKit2 || purchase.buyer == purchase.uploader,
            ])
        }
    }

    private func copyUploads() throws -> Int {
        let devices = [
            #"{"model": "iPhone15,2", "os": "18.1", "app": "4.2.1"}"#,
            #"{"model": "iPhone14,5", "os": "17.5.1", "app": "4.2.0"}"#,
            #"{"model": "iPad13,18", "os": "18.2", "app": "4.2.3"}"#,
        ]
        return try connection.copyIn(SQL.copyReceiptUploads) { writer in
            for index in 0..<world.transactions {
                let purchase = world.purchase(index)
                let uploadedAt = purchase.purchaseDate.addingTimeInterval(3)
                let device = devices[index % devices.count]
                if !purchase.isKnownToJob {
                    // Uploaded since the last run: a real JWS, verified by the bench's first run.
                    try writer.append([
                        uploadID(purchase), world.userID(purchase.uploader), "signed_transaction",
                        try signedTransaction(purchase), Self.null,
                        purchase.storeKit2 ? world.accountToken(purchase.buyer) : nil, purchase.transactionID, device,
                        uploadedAt,
                    ])
                    continue
                }
                // Verified long ago: the job never reads a verified upload's payload again, so a
                // short stand-in keeps the table's heap as narrow as TOASTed payloads leave it.
                let payload = "bench:" + purchase.transactionID
                if purchase.storeKit2 {
                    try writer.append([
                        uploadID(purchase), world.userID(purchase.uploader), "signed_transaction", payload, Self.null,
                        world.accountToken(purchase.buyer), purchase.transactionID, device, uploadedAt,
                    ])
                } else {
                    try writer.append([
                        uploadID(purchase), world.userID(purchase.uploader), "app_receipt", payload,
                        world.hashedUserID(purchase.buyer), Self.null, purchase.transactionID, device, uploadedAt,
                    ])
                }
                if purchase.fate == .shared {
                    try writer.append([
                        uploadID(purchase, second: true), world.userID(purchase.other), "app_receipt", payload,
                        Self.null, Self.null, purchase.transactionID, device, uploadedAt.addingTimeInterval(86400),
                    ])
                }
            }
        }
    }

    private func copyVerifications() throws -> Int {
        try copyKnownPurchases(SQL.copyUploadVerifications) { purchase, writer in
            let verifiedAt = purchase.purchaseDate.addingTimeInterval(3600)
            let method = purchase.storeKit2 ? "jws" : "verify_receipt"
            let status: Int? = purchase.storeKit2 ? nil : 0
            try writer.append([
                uploadID(purchase), "verified", method, status, purchase.environment, purchase.bundleID, 1,
                verifiedAt, verifiedAt,
            ])
            if purchase.fate == .shared {
                try writer.append([
                    uploadID(purchase, second: true), "verified", "verify_receipt", 0, purchase.environment,
                    purchase.bundleID, 1, verifiedAt.addingTimeInterval(86400),
                    verifiedAt.addingTimeInterval(86400),
                ])
            }
        }
    }

    private func copyClaims() throws -> Int {
        try copyKnownPurchases(SQL.copyTransactionClaims) { purchase, writer in
            let created = purchase.purchaseDate.addingTimeInterval(3600)
            if purchase.storeKit2 {
                try writer.append([
                    purchase.transactionID, uploadID(purchase), world.userID(purchase.uploader), Self.null,
                    world.accountToken(purchase.buyer), "jws", created,
                ])
            } else {
                try writer.append([
                    purchase.transactionID, uploadID(purchase), world.userID(purchase.uploader),
                    world.hashedUserID(purchase.buyer), Self.null, "verify_receipt", created,
                ])
            }
            if purchase.fate == .shared {
                try writer.append([
                    purchase.transactionID, uploadID(purchase, second: true), world.userID(purchase.other),
                    Self.null, Self.null, "verify_receipt", created.addingTimeInterval(86400),
                ])
            }
        }
    }

    /// The StoreKit 2 JWS a client uploaded for a purchase the job has not seen yet.
    private func signedTransaction(_ purchase: BenchWorld.Purchase) throws -> String {
        var transaction = JWSTransaction()
        transaction.transactionId = purchase.transactionID
        transaction.originalTransactionId = purchase.originalTransactionID
        transaction.bundleId = purchase.bundleID
        transaction.productId = purchase.fate == .foreignUpload ? "com.other.game.gems" : purchase.productID
        transaction.type = .consumable
        transaction.quantity = purchase.quantity
        transaction.purchaseDate = Date(millisecondsSince1970: purchase.purchaseDate.millisecondsSince1970)
        transaction.originalPurchaseDate = transaction.purchaseDate
        transaction.signedDate = transaction.purchaseDate
        transaction.appAccountToken = purchase.storeKit2 ? world.accountToken(purchase.buyer) : nil
        transaction.inAppOwnershipType = .purchased
        transaction.environment = .production
        transaction.storefront = "CHN"
        transaction.storefrontId = "143465"
        transaction.transactionReason = .purchase
        transaction.price = purchase.price * Int64(purchase.quantity)
        transaction.currency = "CNY"
        return try ca.signJWS(transaction)
    }

    /// The history's statements (`sql/bench/`).
    enum SQL {
        static let anyAppleTransaction: SQLFile = "bench/any_apple_transaction.sql"
        static let secondaryIndexes: SQLFile = "bench/secondary_indexes.sql"
        static let claimsTriggerOff: SQLFile = "bench/claims_trigger_off.sql"
        static let claimsTriggerOn: SQLFile = "bench/claims_trigger_on.sql"
        static let claimFactsDiffering: SQLFile = "bench/claim_facts_differing.sql"
        static let copyProducts: SQLFile = "bench/copy_products.sql"
        static let copyAccountTokens: SQLFile = "bench/copy_account_tokens.sql"
        static let copyAppleTransactions: SQLFile = "bench/copy_apple_transactions.sql"
        static let copyReceiptUploads: SQLFile = "bench/copy_receipt_uploads.sql"
        static let copyUploadVerifications: SQLFile = "bench/copy_upload_verifications.sql"
        static let copyTransactionClaims: SQLFile = "bench/copy_transaction_claims.sql"
        static let copyDeliveries: SQLFile = "bench/copy_deliveries.sql"
        static let finishHistory: SQLFile = "bench/finish_history.sql"
    }
}
