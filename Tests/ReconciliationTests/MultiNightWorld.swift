import AppStore
import AppStoreSimulator
import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport

/// Issue 23 item 3: a world of nights drawn from a seeded PRNG. Each night the app's backend
/// writes what a night brings (uploads, credits, refunds Apple tells of, hand-made grants, ledger
/// edits, token changes, forged and foreign data, staff decisions acted on), then one nightly run
/// judges it. After the last night the same inputs, copied into a fresh database, are judged by
/// one whole-history run, and the two queues are compared.
///
/// Time: night n covers [base + (n − 1) days, base + n days) and its run has `until` = base + n
/// days. `base` lies `nights + 2` days in the past, so every purchase is far older than the grace
/// period when judged, whatever the real clock, and a night is the same for a seed whatever the
/// day it runs.
final class MultiNightWorld {
    static let bundle = "com.hncs.szj"
    static let day: TimeInterval = 86_400

    struct Configuration: CustomStringConvertible {
        var seed: UInt64
        var nights: Int
        var serverAPI: Bool
        /// Compare with a whole-history run after every night, not only the last.
        var everyNight = false
        /// The notification receiver's worker passes before each nightly run (issue 26): it applies
        /// the day's stored notifications and judges their transactions between the nights.
        var receiver = false
        /// Nightly runs over a window from before the first night (`SOAK_CONTROL=1`).
        var control = ProcessInfo.processInfo.environment["SOAK_CONTROL"] == "1"
        /// Android players beside the iPhone ones (issue 38 item 8; `SOAK_PLAY=0` leaves them out).
        var play = ProcessInfo.processInfo.environment["SOAK_PLAY"] != "0"
        /// Google Play's Developer API (a service account) whenever Apple's Server API is on or the
        /// receiver runs between nights (it asks Google about every notification it stores);
        /// without it, Play uploads are verified by their signature alone and voids reach nobody.
        var playAPI: Bool { play && (serverAPI || receiver) }
        var description: String {
            "seed \(seed), \(nights) nights, Server API \(serverAPI ? "on" : "off")\(everyNight ? ", every night" : "")"
                + (receiver ? ", the receiver between nights" : "")
                + (play ? ", Google Play (API \(playAPI ? "on" : "off"))" : ", no Google Play")
                + (control ? ", CONTROL: nightly windows from the beginning" : "")
        }

        /// `SOAK_SEED`, `SOAK_NIGHTS` and `SOAK_EVERY_NIGHT` (`1` or `0`, from `scripts/soak`)
        /// override the fixed CI values.
        static func fromEnvironment(seed: UInt64, nights: Int, serverAPI: Bool, everyNight: Bool = false)
            -> Configuration
        {
            let environment = ProcessInfo.processInfo.environment
            return Configuration(
                seed: environment["SOAK_SEED"].flatMap(UInt64.init) ?? seed,
                nights: environment["SOAK_NIGHTS"].flatMap(Int.init) ?? nights, serverAPI: serverAPI,
                everyNight: environment["SOAK_EVERY_NIGHT"].map { $0 == "1" } ?? everyNight)
        }
    }

    /// The key findings are compared by (issue 23: kind, transaction, accounts).
    struct Key: Hashable, Comparable, CustomStringConvertible {
        var kind: String
        var transaction: String
        var user: String
        var description: String { "\(kind) \(transaction) \(user)" }
        static func < (a: Key, b: Key) -> Bool { a.description < b.description }
    }

    /// What the generator knows of a purchase it made.
    struct Purchase {
        var id: String
        var buyer: String
        var uploader: String
        var product: String
        var quantity: Int
        var jws: Bool
        var customer: String
        var token: UUID?
        var username: String?
        var purchasedAt: Date
        var night: Int
        /// The JWS as Apple signs it now (after a refund or its reversal).
        var signed = ""
        var refunded = false
        /// When Apple's last refund of it took effect, and whether it was prorated (a receipt cannot
        /// say so).
        var refundedAt: Date?
        var refundProrated = false
        var uploaded = false
    }

    let configuration: Configuration
    var random: SplitMix64
    /// Google Play's draws, a stream of their own (``playing`` swaps it in), so that a seed's App
    /// Store nights are drawn alike with and without Android players.
    var playRandom: SplitMix64
    /// True while Google Play's events are drawn: ``random`` is Play's stream then, and work put off
    /// goes to ``playLater``.
    var playing = false
    var playLater: [(night: Int, what: String, action: (MultiNightWorld) throws -> Void)] = []
    var playPurchases: [PlayPurchase] = []
    /// The job's environment for the simulator's Google Play (set once it listens).
    var playEnvironment: [String: String] = [:]
    let base: Date
    let chain: TestDatabase
    let connection: Connection
    let state: URL
    let simulator: AppStoreSimulator
    let forger: AppStoreSimulator
    let quiet = Logger(label: "multi-night", factory: { _ in SwiftLogNoOpLogHandler() })

    let users = (1...16).map { String(format: "u%02d", $0) }

    /// The accounts that use the app by night `night`: four from the start, then one more every
    /// few nights. A purchase may be bound to an account that joins later (a family member's
    /// device bought it); its first upload, ledger row or token makes it known.
    var active: [String] {
        let every = max(1, configuration.nights / 10)
        return users.enumerated().filter { index, _ in index < 4 || night >= 1 + (index - 3) * every }.map(\.element)
    }
    var purchases: [Purchase] = []
    /// Per transaction, what happened to it night by night: printed with a difference.
    var timeline: [String: [String]] = [:]
    /// Facts a difference's class is read from.
    var lateOldUploads: Set<String> = []
    var backdatedGrants: Set<String> = []
    /// Transactions two receipts of one second told of, one from before Apple's change and one after.
    var tiedReceipts: Set<String> = []
    var appleOnlyNews: Set<String> = []
    /// Transactions the last whole-history run has a shared_receipt open for.
    var sharedInWhole: Set<String> = []
    var notifiedNews: Set<String> = []
    /// The night each account was first known to the job (an upload, a ledger row, a token row).
    var firstKnown: [String: Int] = [:]
    /// Tokens of purchases whose account_tokens row is not (yet) written, by token.
    var unmappedTokens: [UUID: String] = [:]
    var mappedTokens: [UUID: String] = [:]
    /// Work a night put off to a later one (a late upload, a late credit, the news of a refund).
    var later: [(night: Int, what: String, action: (MultiNightWorld) throws -> Void)] = []
    var nextTransaction = 0
    /// How many times each kind of event happened: what a seed covered.
    var coverage: [String: Int] = [:]
    func count(_ what: String) { coverage[what, default: 0] += 1 }
    var night = 0
    /// The night the Server API fails (and the next clears), when it is on.
    let faultNight: Int?

    init(_ configuration: Configuration) throws {
        self.configuration = configuration
        random = SplitMix64(seed: configuration.seed)
        playRandom = SplitMix64(seed: configuration.seed ^ 0x900_91e)
        base = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 3600).rounded(.down) * 3600)
            .addingTimeInterval(-Double(configuration.nights + 2) * Self.day)
        chain = try TestDatabase.create("multi_night")
        connection = try chain.connect()
        _ = try Schema.migrate(connection)
        state = Scratch.root.appendingPathComponent("multi-night-\(UUID().uuidString)")
        var logger = Logger(label: "sim")
        logger.logLevel = .critical
        simulator = try AppStoreSimulator(configuration: .init(
            stateDirectory: state, logger: logger, playPackageNames: configuration.play ? [Self.playPackage] : []))
        forger = try AppStoreSimulator(configuration: .init(logger: logger))
        var draw = SplitMix64(seed: configuration.seed ^ 0x5eed)
        faultNight = configuration.serverAPI && configuration.nights > 3
            ? Int.random(in: 2...(configuration.nights - 1), using: &draw) : nil
        try Self.plantCatalogue(on: connection)
    }

    static func plantCatalogue(on connection: Connection) throws {
        try connection.executeScript(
            """
            INSERT INTO reconcile.products (product_id, product_type, price_milli, currency) VALUES
                ('coin42', 'consumable', 6000, 'CNY'), ('coins3', 'consumable', 30000, 'CNY'),
                ('coin4886', 'consumable', 648000, 'CNY'), ('unlock', 'non_consumable', 30000, 'CNY'),
                ('vip_month', 'auto_renewable', 30000, 'CNY');
            """)
    }

    // MARK: Time

    /// When night `n`'s run ends its window.
    func until(_ n: Int) -> Date { base.addingTimeInterval(Double(n) * Self.day) }

    /// A random moment of the current night, at least two hours before its run's `until`.
    func moment() -> Date {
        until(night - 1).addingTimeInterval(Double(Int.random(in: 60...(20 * 60), using: &random)) * 60)
    }

    // MARK: Drawing

    func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }
    func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }
    func other(than user: String) -> String { pick(active.filter { $0 != user }) }

    func note(_ transaction: String, _ text: String) {
        timeline[transaction, default: []].append("night \(night): \(text)")
    }

    func known(_ user: String) {
        if firstKnown[user] == nil { firstKnown[user] = night }
    }

    func newTransactionID() -> String {
        nextTransaction += 1
        return String(2_000_000_000 + Int(configuration.seed % 1000) * 100_000 + nextTransaction)
    }

    func sha256(_ text: String) throws -> String {
        try connection.query("SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')", [text])[0].decode(String.self, at: 0)
    }

    func uuid() -> UUID {
        let a = random.next(), b = random.next()
        let hex = String(format: "%016llx%016llx", a, b)
        let chars = Array(hex)
        let text = "\(String(chars[0..<8]))-\(String(chars[8..<12]))-4\(String(chars[13..<16]))-8\(String(chars[17..<20]))-\(String(chars[20..<32]))"
        return UUID(uuidString: text)!
    }

    // MARK: Writing the app's tables

    func upload(
        _ user: String, kind: String, payload: String, username: String? = nil, token: UUID? = nil,
        claimed: String?, at uploadedAt: Date
    ) throws {
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads
                (user_id, kind, payload, application_username, app_account_token, claimed_transaction_id, device,
                 uploaded_at)
            VALUES ($1, $2, $3, $4, $5::uuid, $6, '{"model": "iPhone15,2", "os": "17.5", "app": "4.2.0"}', $7)
            """, [user, kind, payload, username, token?.uuidString.lowercased(), claimed, uploadedAt])
        known(user)
    }

    func deliver(_ transaction: String, _ user: String, _ product: String, quantity: Int, at deliveredAt: Date) throws {
        try connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at)
            VALUES ($1, $2, $3, $4, $5)
            """, [transaction, user, product, quantity, deliveredAt])
        known(user)
    }

    func mapToken(_ token: UUID, to user: String) throws {
        try connection.execute(
            """
            INSERT INTO reconcile.account_tokens (app_account_token, user_id) VALUES ($1::uuid, $2)
            ON CONFLICT (app_account_token) DO UPDATE SET user_id = EXCLUDED.user_id
            """, [token.uuidString.lowercased(), user])
        unmappedTokens[token] = nil
        mappedTokens[token] = user
        known(user)
    }

    func store(_ notification: SignedNotificationBody) throws {
        let body = String(decoding: try JSONEncoder().encode(notification), as: UTF8.self)
        try connection.execute(
            "INSERT INTO reconcile.notifications (signed_payload, received_at) VALUES ($1, $2)", [body, moment()])
    }

    /// `created`: the receipt's creation time (its signedDate for the white table), now if nil.
    func receipt(_ purchase: Purchase, cancelled: Date? = nil, by issuer: AppStoreSimulator? = nil,
                 bundle: String = MultiNightWorld.bundle, created: Date? = nil) throws -> String {
        try (issuer ?? simulator).issueReceipt(SimulatedReceipt(
            bundleID: bundle, environment: .production, creationDate: created,
            purchases: [.init(productID: purchase.product, transactionID: purchase.id,
                              originalTransactionID: purchase.id, purchaseDate: purchase.purchasedAt,
                              quantity: purchase.quantity, cancellationDate: cancelled)])).receiptData
    }

    /// Uploads what the purchase's device holds now (a receipt or the JWS as Apple signs it today).
    /// `created`: a receipt's creation time, now if nil.
    func uploadPurchase(_ purchase: Purchase, at uploadedAt: Date, cancelled: Date? = nil, created: Date? = nil) throws {
        if purchase.jws {
            try upload(purchase.uploader, kind: "signed_transaction", payload: purchase.signed, token: purchase.token,
                       claimed: purchase.id, at: uploadedAt)
        } else {
            try upload(purchase.uploader, kind: "app_receipt",
                       payload: try receipt(purchase, cancelled: cancelled, created: created),
                       username: purchase.username, claimed: purchase.id, at: uploadedAt)
        }
    }

    /// Does `action` `nights` nights from now; 0: at once (tonight's due work was taken when the
    /// night began, so a deferral to tonight would never run: the news of 70 % of refunds and
    /// reversals was lost that way, neither told nor counted as told to nobody).
    func defer_(_ nights: Int, _ what: String, _ action: @escaping (MultiNightWorld) throws -> Void) throws {
        guard nights > 0 else { return try action(self) }
        if playing {
            playLater.append((night + nights, what, action))
        } else {
            later.append((night + nights, what, action))
        }
    }

    // MARK: One night's events

    /// Writes night `n`'s events. Returns what happened, one line an event.
    func generate(night n: Int) throws {
        night = n
        let due = later.filter { $0.night == n }
        later.removeAll { $0.night == n }
        for work in due { try work.action(self) }
        let events = Int.random(in: 3...6, using: &random)
        for _ in 0..<events {
            let roll = Int.random(in: 0..<100, using: &random)
            switch roll {
            case 0..<30: try purchase()
            case 30..<38: try purchase(forUnknownAccount: true)
            case 38..<48: try refund()
            case 48..<52: try reverseRefund()
            case 52..<58: try handGrant()
            case 58..<68: try editLedger()
            case 68..<75: try changeToken()
            case 75..<81: try forgedOrForeign()
            case 81..<90 where configuration.serverAPI: try historyOnlyPurchase()
            default: try decide()
            }
        }
        if configuration.play { try generatePlay() }
    }

    /// A purchase; `forUnknownAccount`: made on the device of an account the job does not know yet
    /// (a family member's), bound to it, uploaded and credited by the device's logged-in account.
    func purchase(forUnknownAccount: Bool = false) throws {
        let unknown = users.filter { firstKnown[$0] == nil }
        let family = forUnknownAccount && !unknown.isEmpty
        let buyer = family ? pick(unknown) : pick(users)
        let id = newTransactionID()
        let (product, quantity, price): (String, Int, Int64) = switch Int.random(in: 0..<10, using: &random) {
        case 0..<6: ("coin42", 1, 6000)
        case 6..<8: ("coins3", 3, 90000)
        default: ("unlock", 1, 30000)
        }
        let jws = chance(0.5)
        let at = moment()
        var purchase = Purchase(
            id: id, buyer: buyer,
            uploader: family || !active.contains(buyer) || chance(0.25) ? other(than: buyer) : buyer,
            product: product,
            quantity: quantity, jws: jws, customer: "apple-\(buyer)\(chance(0.2) ? "-2" : "")", purchasedAt: at,
            night: night)
        var binding = "unbound"
        if jws, family || chance(0.6) {
            let token = uuid()
            purchase.token = token
            binding = "token → \(buyer)"
            switch Int.random(in: family ? 6..<10 : 0..<10, using: &random) {
            case 0..<6: try mapToken(token, to: buyer)
            case 6..<9:
                unmappedTokens[token] = buyer
                let wait = Int.random(in: 1...4, using: &random)
                binding += " (mapped on night \(night + wait))"
                try defer_(wait, "map token") { world in
                    if world.unmappedTokens[token] != nil { try world.mapToken(token, to: buyer) }
                }
            default:
                unmappedTokens[token] = buyer
                binding += " (never mapped)"
            }
        } else if !jws, family || chance(0.6) {
            let hashed = chance(0.6)
            purchase.username = hashed ? try sha256(buyer) : buyer
            binding = hashed ? "username sha256(\(buyer))" : "username \(buyer)"
        }
        // Created with the id the generator chose so that a seed's ids do not depend on the simulator.
        var request = SimulatedTransaction(
            productId: product, customer: purchase.customer, bundleId: Self.bundle, environment: .production,
            type: product == "unlock" ? .nonConsumable : .consumable, quantity: quantity, purchaseDate: at,
            appAccountToken: purchase.token, price: price, currency: "CNY")
        request.transactionId = id
        purchase.signed = try simulator.createTransaction(request).signedTransaction
        try notifyCharge(id, storedShare: 0.25)
        count("purchase by \(jws ? "JWS" : "receipt"), \(binding.split(separator: " ").first ?? "")")
        if binding != "unbound" && purchase.uploader != buyer && firstKnown[buyer] == nil {
            count("purchase bound to an account not yet known, uploaded by another")
        }
        if family && chance(0.3) {
            // The account first appears by a ledger row only (an unrelated credit by hand).
            let wait = Int.random(in: 1...3, using: &random)
            try defer_(wait, "first ledger row") { world in
                guard world.firstKnown[buyer] == nil else { return }
                let grant = "9\(world.newTransactionID())"
                try world.deliver(grant, buyer, "coin42", quantity: 1, at: world.moment())
                world.count("account first known by a ledger row")
                world.note(id, "\(buyer) first known by a credit by hand of \(grant)")
                world.note(grant, "a grant by hand to \(buyer), its first ledger row")
            }
        }
        note(id, "\(jws ? "JWS" : "receipt") purchase of \(quantity) \(product) by \(buyer) (\(purchase.customer)), "
             + "\(binding), uploader \(purchase.uploader)")

        // The upload: tonight, days late, or stored late with the client's old timestamp.
        purchase.uploaded = true
        try uploadSometime(id, boughtAt: at, shares: (tonight: 70, late: 15, lateOld: 15), store: "") { world, uploadedAt in
            try world.uploadPurchase(purchase, at: uploadedAt)
        }
        purchases.append(purchase)
        try credit(purchase, at: at)
    }

    /// Uploads a purchase bought at `boughtAt` as its device does, by `shares` out of 100: tonight,
    /// one to three nights late (`uploaded_at` then), two to four nights late with the client's
    /// old `uploaded_at`, or (the rest) never. `store` prefixes the counters (`"Play "`).
    func uploadSometime(
        _ id: String, boughtAt at: Date, shares: (tonight: Int, late: Int, lateOld: Int), store: String,
        _ upload: @escaping (MultiNightWorld, Date) throws -> Void
    ) throws {
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < shares.tonight {
            try upload(self, at.addingTimeInterval(60))
        } else if roll < shares.tonight + shares.late {
            let wait = Int.random(in: 1...3, using: &random)
            count("\(store)upload days late")
            note(id, "upload arrives on night \(night + wait)")
            try defer_(wait, "late upload") { world in
                try upload(world, world.moment())
                world.note(id, "uploaded late, uploaded_at tonight")
            }
        } else if roll < shares.tonight + shares.late + shares.lateOld {
            let wait = Int.random(in: 2...4, using: &random)
            note(id, "upload stored on night \(night + wait) with uploaded_at of tonight")
            try defer_(wait, "late upload, old uploaded_at") { world in
                try upload(world, at.addingTimeInterval(120))
                world.lateOldUploads.insert(id)
                world.count("\(store)upload stored late with an old uploaded_at")
                world.note(id, "stored with uploaded_at \(TimeExpression.format(at.addingTimeInterval(120)))")
            }
        } else {
            count("\(store)purchase never uploaded")
            note(id, "never uploaded")
        }
    }

    /// The app credits the session's account (the uploader), well or badly, tonight or later.
    func credit(_ purchase: Purchase, at: Date) throws {
        let user = purchase.uploader
        let credits: [(String, String, Int, String)]
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<55 where purchase.quantity > 1 && chance(0.4):
            // Issue 36 item 13: credited short, then the rest as a second row (the app's own
            // correction, tonight or later): the ledger makes up Apple's quantity, no finding.
            let first = Int.random(in: 1..<purchase.quantity, using: &random)
            try deliver(purchase.id, user, purchase.product, quantity: first, at: at.addingTimeInterval(90))
            count("credited short")
            note(purchase.id, "credited short: \(first) \(purchase.product) to \(user)")
            let rest = purchase.quantity - first
            try defer_(chance(0.5) ? 0 : Int.random(in: 1...2, using: &random), "correction as a second row") { world in
                try world.deliver(purchase.id, user, purchase.product, quantity: rest, at: world.moment())
                world.count("a correction credited as a second row")
                world.note(purchase.id, "the rest credited as a second row: \(rest) \(purchase.product) to \(user)")
            }
            return
        case 0..<55: credits = [(user, purchase.product, purchase.quantity, "credited")]
        case 55..<67: credits = []
        case 67..<75:
            credits = [(user, purchase.product, purchase.quantity, "credited"),
                       (user, purchase.product, purchase.quantity, "credited again")]
        case 75..<83:
            credits = [(user, purchase.product == "coin42" ? "coin4886" : "coin42", purchase.quantity,
                        "credited the wrong product")]
        case 83..<91:
            // A pack credited one unit short (its quantity_mismatch granted is a second row) or over.
            let short = purchase.quantity > 1 && chance(0.5)
            credits = [(user, purchase.product, purchase.quantity + (short ? -1 : 1), "credited the wrong quantity")]
        default:
            credits = [(other(than: user), purchase.product, purchase.quantity, "credited to the wrong account")]
        }
        if credits.isEmpty {
            count("missed credit")
            note(purchase.id, "never credited")
            return
        }
        let wait = chance(0.2) ? Int.random(in: 1...2, using: &random) : 0
        for (to, product, quantity, what) in credits {
            if wait == 0 {
                try deliver(purchase.id, to, product, quantity: quantity, at: at.addingTimeInterval(90))
                note(purchase.id, "\(what): \(quantity) \(product) to \(to)")
                count(what)
            } else {
                try defer_(wait, "late credit") { world in
                    try world.deliver(purchase.id, to, product, quantity: quantity, at: world.moment())
                    world.count(what + " (late)")
                    world.note(purchase.id, "\(what) late: \(quantity) \(product) to \(to)")
                }
            }
        }
    }

    func refund() throws {
        let candidates = purchases.indices.filter { !purchases[$0].refunded }
        guard !candidates.isEmpty else { return try purchase() }
        let index = pick(candidates)
        purchases[index].refunded = true
        let prorated = purchases[index].quantity == 3 && chance(0.5)
        let at = moment()
        purchases[index].signed = try simulator.refundTransaction(
            purchases[index].id, date: at, type: prorated ? .refundProrated : .refundFull,
            percentage: prorated ? pick([33_333, 66_667]) : nil).signedTransaction
        purchases[index].refundedAt = at
        purchases[index].refundProrated = prorated
        let purchase = purchases[index]
        count(prorated ? "partial refund" : "refund")
        note(purchase.id, "Apple refunds it\(prorated ? " in part" : "")")
        try tell(purchase, prorated: prorated, cancelled: at, what: "refund")
    }

    func reverseRefund() throws {
        let candidates = purchases.indices.filter { purchases[$0].refunded }
        guard !candidates.isEmpty else { return try refund() }
        let index = pick(candidates)
        purchases[index].refunded = false
        purchases[index].signed = try simulator.reverseRefund(purchases[index].id).signedTransaction
        count("refund reversed")
        note(purchases[index].id, "Apple reverses the refund")
        let before = purchases[index].refundProrated ? nil : purchases[index].refundedAt
        try tell(purchases[index], prorated: false, cancelled: nil, what: "reversal", before: before)
    }

    /// How the news of Apple's change reaches the job. Apple signs its notification at once; the
    /// app's endpoint stores it (maybe nights later) or misses it (then only Notification History,
    /// with the Server API, has it); the device may upload the changed purchase. Without the
    /// Server API and with neither, nobody tells the job: both runs are equally blind to it.
    /// `before`: the receipt's cancellation before this change (a reversal's refund), when a receipt
    /// can say it.
    func tell(_ purchase: Purchase, prorated: Bool, cancelled: Date?, what: String, before: Date? = nil) throws {
        let id = purchase.id
        let type: NotificationType = cancelled == nil ? .refundReversed : .refund
        let stored = chance(0.5)
        let body = try simulator.signNotification(type: type, transactionId: id, delivered: stored)
        let uploaded = (purchase.jws || !prorated) && chance(0.4)
        // Issue 36 item 12: two receipts created in the same second, one from before Apple's change
        // and one from after it (two devices, or one refreshed within the second), uploaded in
        // either order, tonight or later: the white table must end the same whichever is applied
        // last (at an equal date the revoked one wins, so after a reversal both sides keep the
        // revocation until something signed later says otherwise).
        let tie = !purchase.jws && !prorated && (cancelled != nil || before != nil) && chance(0.35)
        if tie {
            let created = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            var copies = [(before, "before the \(what)"), (cancelled, "after the \(what)")]
            if chance(0.5) { copies.reverse() }
            count("two receipts of one second, before and after the \(what)")
            tiedReceipts.insert(id)
            for (index, (state, label)) in copies.enumerated() {
                let wait = index == 0 ? 0 : Int.random(in: 0...2, using: &random)
                try defer_(wait, "receipt \(label)") { world in
                    try world.uploadPurchase(purchase, at: world.moment(), cancelled: state, created: created)
                    world.note(id, "a receipt of \(label) (created \(TimeExpression.format(created))) uploaded")
                }
            }
        }
        if stored {
            let wait = chance(0.3) ? Int.random(in: 1...2, using: &random) : 0
            try defer_(wait, "\(what) notified") { world in
                try world.store(body)
                world.notifiedNews.insert(id)
                world.count("\(type.rawValue) notification stored")
                world.note(id, "\(type.rawValue) notification stored")
            }
        } else if configuration.serverAPI {
            notifiedNews.insert(id)
            count("\(type.rawValue) notification missed by the endpoint")
            note(id, "the app's endpoint misses the \(type.rawValue) notification")
        }
        if uploaded {
            let wait = chance(0.3) ? Int.random(in: 1...2, using: &random) : 0
            try defer_(wait, "\(what) uploaded") { world in
                try world.uploadPurchase(purchase, at: world.moment(), cancelled: cancelled)
                world.count("\(what) uploaded")
                world.note(id, "the \(what) uploaded by \(purchase.uploader)")
            }
        }
        if !stored && !uploaded && !tie && !configuration.serverAPI {
            appleOnlyNews.insert(id)
            count("\(what) nobody tells")
            note(id, "nobody tells the job of the \(what)")
        }
    }

    /// Apple's ONE_TIME_CHARGE for a purchase: the app's endpoint stores it or misses it.
    func notifyCharge(_ id: String, storedShare: Double) throws {
        let stored = chance(storedShare)
        guard stored || configuration.serverAPI else { return }
        let body = try simulator.signNotification(type: .oneTimeCharge, transactionId: id, delivered: stored)
        if stored {
            try store(body)
            note(id, "ONE_TIME_CHARGE notification stored")
        }
    }

    func handGrant() throws {
        let id = "9\(newTransactionID())"
        let user = pick(active)
        let backdated = chance(0.5)
        let at = backdated ? moment().addingTimeInterval(-Double(Int.random(in: 2...4, using: &random)) * Self.day)
            : moment()
        try deliver(id, user, pick(["coin42", "coin4886"]), quantity: 1, at: at)
        if backdated { backdatedGrants.insert(id) }
        count(backdated ? "hand-made grant, backdated" : "hand-made grant")
        note(id, "a grant by hand to \(user) of a transaction Apple never issued\(backdated ? ", backdated" : "")")
    }

    func editLedger() throws {
        let rows = try connection.query(
            "SELECT id, transaction_id, user_id, quantity FROM reconcile.deliveries ORDER BY id")
        guard !rows.isEmpty else { return try purchase() }
        let row = pick(rows)
        let id = try row.decode(Int64.self, at: 0)
        let transaction = try row.decode(String.self, at: 1)
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            try connection.execute(
                "UPDATE reconcile.deliveries SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL", [id, moment()])
            count("ledger row revoked")
            note(transaction, "ledger row \(id) revoked")
        case 1:
            try connection.execute("DELETE FROM reconcile.deliveries WHERE id = $1", [id])
            count("ledger row deleted")
            note(transaction, "ledger row \(id) deleted")
        case 2:
            let quantity = Int.random(in: 1...3, using: &random)
            try connection.execute("UPDATE reconcile.deliveries SET quantity = $2 WHERE id = $1", [id, quantity])
            count("ledger row corrected")
            note(transaction, "ledger row \(id) corrected to quantity \(quantity)")
        default:
            if let purchase = purchases.first(where: { $0.id == transaction }) {
                try connection.execute(
                    "UPDATE reconcile.deliveries SET user_id = $2, product_id = $3 WHERE id = $1",
                    [id, purchase.buyer, purchase.product])
                known(purchase.buyer)
                count("ledger row corrected")
                note(transaction, "ledger row \(id) corrected to \(purchase.product) for \(purchase.buyer)")
            } else if chance(0.5) {
                // A transaction Apple never issued: its unverified_delivery names the ledger's
                // product, which the open item must follow.
                let product = pick(["coin42", "coins3", "coin4886"])
                try connection.execute("UPDATE reconcile.deliveries SET product_id = $2 WHERE id = $1", [id, product])
                count("ledger row's product corrected")
                note(transaction, "ledger row \(id) corrected to \(product)")
            } else {
                try connection.execute(
                    "UPDATE reconcile.deliveries SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
                    [id, moment()])
                count("ledger row revoked")
            note(transaction, "ledger row \(id) revoked")
            }
        }
    }

    func changeToken() throws {
        switch Int.random(in: 0..<3, using: &random) {
        case 0 where !unmappedTokens.isEmpty:
            let (token, user) = pick(unmappedTokens.sorted { $0.key.uuidString < $1.key.uuidString })
            try mapToken(token, to: user)
            count("account_tokens row inserted"); noteToken(token, "account_tokens row inserted: → \(user)")
        case 1 where !mappedTokens.isEmpty:
            let (token, user) = pick(mappedTokens.sorted { $0.key.uuidString < $1.key.uuidString })
            let to = other(than: user)
            try mapToken(token, to: to)
            count("account_tokens row remapped"); noteToken(token, "account_tokens row remapped: → \(to)")
        default:
            guard !mappedTokens.isEmpty else { return try purchase() }
            let (token, user) = pick(mappedTokens.sorted { $0.key.uuidString < $1.key.uuidString })
            try connection.execute(
                "DELETE FROM reconcile.account_tokens WHERE app_account_token = $1::uuid", [token.uuidString.lowercased()])
            mappedTokens[token] = nil
            unmappedTokens[token] = user
            count("account_tokens row removed"); noteToken(token, "account_tokens row removed")
        }
    }

    func noteToken(_ token: UUID, _ text: String) {
        for purchase in purchases where purchase.token == token { note(purchase.id, text) }
    }

    func forgedOrForeign() throws {
        let user = pick(active)
        let at = moment()
        let id = newTransactionID()
        let fake = Purchase(id: id, buyer: user, uploader: user, product: "coin4886", quantity: 1, jws: chance(0.5),
                            customer: "apple-\(user)", purchasedAt: at, night: night)
        switch Int.random(in: 0..<4, using: &random) {
        case 3:
            // A tester's sandbox purchase credited as real money (environment_mismatch).
            var request = SimulatedTransaction(
                productId: "coin42", customer: "tester-\(user)", bundleId: Self.bundle, environment: .sandbox,
                type: .consumable, quantity: 1, purchaseDate: at, price: 6000, currency: "CNY")
            request.transactionId = id
            let signed = try simulator.createTransaction(request)
            try upload(user, kind: "signed_transaction", payload: signed.signedTransaction,
                       claimed: signed.transactionId, at: at)
            try deliver(signed.transactionId, user, "coin42", quantity: 1, at: at.addingTimeInterval(60))
            count("sandbox purchase credited")
            note(signed.transactionId, "sandbox purchase uploaded by \(user) and credited")
        case 0:
            // Signed by another CA: invalid; the credit it got is unverified.
            if fake.jws {
                var request = SimulatedTransaction(
                    productId: "coin4886", customer: "forger", bundleId: Self.bundle, environment: .production,
                    type: .consumable, quantity: 1, purchaseDate: at, price: 648_000, currency: "CNY")
                request.transactionId = id
                let signed = try forger.createTransaction(request)
                try upload(user, kind: "signed_transaction", payload: signed.signedTransaction,
                           claimed: signed.transactionId, at: at)
                try deliver(signed.transactionId, user, "coin4886", quantity: 1, at: at.addingTimeInterval(60))
                count("forged JWS")
                note(signed.transactionId, "forged JWS uploaded by \(user) and credited")
            } else {
                try upload(user, kind: "app_receipt", payload: try receipt(fake, by: forger), claimed: id, at: at)
                try deliver(id, user, "coin4886", quantity: 1, at: at.addingTimeInterval(60))
                count("forged receipt")
                note(id, "forged receipt uploaded by \(user) and credited")
            }
        case 1:
            if fake.jws {
                var request = SimulatedTransaction(
                    productId: "coin42", customer: "apple-\(user)", bundleId: "com.other.app",
                    environment: .production, type: .consumable, quantity: 1, purchaseDate: at, price: 6000,
                    currency: "CNY")
                request.transactionId = id
                let signed = try simulator.createTransaction(request)
                try upload(user, kind: "signed_transaction", payload: signed.signedTransaction,
                           claimed: signed.transactionId, at: at)
                count("foreign-bundle JWS")
                note(signed.transactionId, "JWS of another app uploaded by \(user)")
            } else {
                try upload(user, kind: "app_receipt", payload: try receipt(fake, bundle: "com.other.app"),
                           claimed: id, at: at)
                count("foreign-bundle receipt")
                note(id, "receipt of another app uploaded by \(user)")
            }
        default:
            // Someone else's receipt replayed from this account.
            guard let victim = purchases.filter({ !$0.jws && $0.uploaded }).last else { return try purchase() }
            try uploadPurchase(Purchase(
                id: victim.id, buyer: victim.buyer, uploader: user, product: victim.product,
                quantity: victim.quantity, jws: false, customer: victim.customer,
                purchasedAt: victim.purchasedAt, night: night), at: at)
            count("receipt replayed by another account")
            note(victim.id, "receipt replayed by \(user)")
        }
    }

    /// A purchase no upload ever carries: only the customer's Server API history shows it.
    func historyOnlyPurchase() throws {
        guard let known = purchases.filter({ configuration.serverAPI && $0.uploaded }).last else {
            return try purchase()
        }
        let id = newTransactionID()
        let at = moment()
        let customer = chance(0.5) ? known.customer : "apple-\(known.buyer)-2"
        var request = SimulatedTransaction(
            productId: "coin42", customer: customer, bundleId: Self.bundle, environment: .production,
            type: .consumable, quantity: 1, purchaseDate: at, price: 6000, currency: "CNY")
        request.transactionId = id
        _ = try simulator.createTransaction(request)
        try notifyCharge(id, storedShare: 0.5)
        let credited = chance(0.5)
        if credited { try deliver(id, known.uploader, "coin42", quantity: 1, at: at.addingTimeInterval(60)) }
        count("history-only purchase\(customer.hasSuffix("-2") ? " on a second Apple account" : "")")
        note(id, "bought on \(customer), never uploaded\(credited ? ", credited to \(known.uploader)" : "")")
    }

    /// A person decides one or two open items; the app then carries out the outbox.
    func decide() throws {
        let service = ReviewDecisions(connection: connection, approval: .none, judgement: .asStored)
        let open = try connection.query(
            """
            SELECT id, kind, transaction_id, coalesce(grant_quantity, 0), coalesce(revoke_quantity, 0)
              FROM reconcile.review_items WHERE status = 'open' ORDER BY id
            """)
        guard !open.isEmpty else { return }
        for _ in 0..<min(open.count, Int.random(in: 1...2, using: &random)) {
            let row = pick(open)
            let id = try row.decode(Int64.self, at: 0)
            let kind = try row.decode(String.self, at: 1)
            let transaction = try row.decode(String?.self, at: 2) ?? "-"
            let (grants, revokes) = (try row.decode(Int.self, at: 3) > 0, try row.decode(Int.self, at: 4) > 0)
            let decided: Resolution = switch kind {
            case "missed_delivery": .granted
            case "duplicate_delivery", "refunded_delivery", "unverified_delivery": .revoked
            case "wrong_account": .moved
            // The missing units granted (the app credits them as a second row, item 13), the
            // units over Apple's revoked.
            case "quantity_mismatch" where grants: .granted
            case "quantity_mismatch" where revokes: .revoked
            default: .noAction
            }
            let resolution: Resolution? = chance(0.25) ? nil : decided
            do {
                if let resolution {
                    _ = try service.resolve(id: id, resolution: resolution, by: "sue", note: "night \(night)")
                    count("staff resolves \(kind) as \(resolution.rawValue)")
                    note(transaction, "sue resolves \(kind) as \(resolution.rawValue)")
                } else {
                    _ = try service.dismiss(id: id, by: "sue", note: "night \(night)")
                    count("staff dismisses")
                    note(transaction, "sue dismisses \(kind)")
                }
            } catch is ReviewError {
                // Decided already tonight, or nothing to grant to: a person leaves it.
                continue
            }
        }
        try actOnOutbox()
    }

    func actOnOutbox() throws {
        let outbox = ActionOutbox(connection: connection)
        let pending = try outbox.list(pending: true)
        for entry in pending {
            let transaction = entry.transactionID ?? "-"
            let quantity = entry.quantity ?? 1
            switch entry.action {
            case .grant:
                try deliver(transaction, entry.toUserID ?? "-", entry.productID ?? "coin42", quantity: quantity,
                            at: moment())
            case .revoke:
                try connection.execute(
                    """
                    WITH one AS (
                        SELECT id FROM reconcile.deliveries
                         WHERE transaction_id = $1 AND user_id = $2 AND revoked_at IS NULL ORDER BY id DESC LIMIT 1)
                    UPDATE reconcile.deliveries d
                       SET quantity = CASE WHEN d.quantity > $3::int THEN d.quantity - $3::int ELSE d.quantity END,
                           revoked_at = CASE WHEN d.quantity > $3::int THEN NULL ELSE $4::timestamptz END
                      FROM one WHERE d.id = one.id
                    """, [transaction, entry.fromUserID ?? "-", quantity, moment()])
            case .move:
                try connection.execute(
                    """
                    WITH one AS (
                        SELECT id FROM reconcile.deliveries
                         WHERE transaction_id = $1 AND user_id = $2 AND revoked_at IS NULL ORDER BY id LIMIT 1)
                    UPDATE reconcile.deliveries d SET user_id = $3 FROM one WHERE d.id = one.id
                    """, [transaction, entry.fromUserID ?? "-", entry.toUserID ?? "-"])
                known(entry.toUserID ?? "-")
            }
            note(transaction, "the app carries out \(entry.action.rawValue) \(quantity) "
                 + "\(entry.fromUserID ?? "") → \(entry.toUserID ?? "")")
        }
        _ = try outbox.ack(pending.map(\.id), by: "app")
    }
}
