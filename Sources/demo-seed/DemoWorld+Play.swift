import AppStoreSimulator
import Foundation

/// The demo game's Android app on Google Play (SPEC section 18): its players buy the same products
/// into the same ledger, through Play Billing, and leak orders the same ways, plus Google's own (a
/// purchase nobody acknowledged, refunded by Google three days later).
///
/// Drawn from a random source of its own, after Apple's players: the App Store half of the demo,
/// and its findings, are exactly what they were without it.
///
/// The running simulator keeps Play's purchases in memory, so the seed writes what it asked of its
/// own simulator as requests (``PlayDemo/requestsFile``) that scripts/demo posts to the running one
/// on every start: the same tokens, orders, times and voids, so the API answers what the uploads say.
struct PlayDemo {
    static let package = "com.hncs.szj.android"
    /// In the simulator's state directory: one request a line, `POST <path>\t<json body>`.
    static let requestsFile = "demo-play-requests.txt"

    let simulator: AppStoreSimulator
    var random: SplitMix64
    let now: Date
    /// Requests for the running simulator, in order.
    var requests: [(path: String, body: String)] = []
    var uploads: [DemoWorld.UploadRow] = []
    var deliveries: [DemoWorld.DeliveryRow] = []
    var accidents: [String] = []

    init(simulator: AppStoreSimulator, random: SplitMix64, now: Date) {
        self.simulator = simulator
        self.random = random
        self.now = now
    }

    mutating func orderID() -> String {
        func digits(_ count: Int) -> String {
            String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &random))) })
        }
        return "GPA.33\(digits(2))-\(digits(4))-\(digits(4))-\(digits(5))"
    }

    mutating func token() -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        return "demo" + String((0..<40).map { _ in letters.randomElement(using: &random)! })
    }

    /// A purchase made through Play Billing: created in the seed's simulator (which signs it with
    /// the package's licence key) and recorded for the running one.
    mutating func buy(
        _ product: String, by account: String?, at bought: Date, quantity: Int = 1, acknowledged: Bool = true,
        test: Bool = false, pending: Bool = false, withoutOrderID: Bool = false
    ) throws -> CreatedPlayPurchase {
        let price = DemoWorld.catalogue.first { $0.0 == product }?.2 ?? 6000
        var request = PlayPurchaseRequest(
            packageName: Self.package, productId: product,
            kind: product.hasSuffix("vip_auto") ? .subscription : .oneTime, quantity: quantity,
            obfuscatedAccountId: account, testPurchase: test, pending: pending, acknowledged: acknowledged,
            purchaseTimeMillis: Int64((bought.timeIntervalSince1970 * 1000).rounded()),
            withoutOrderId: withoutOrderID)
        request.purchaseToken = token()
        if !withoutOrderID { request.orderId = orderID() }
        request.priceMicros = price * 1000
        request.currency = "CNY"
        let created = try simulator.play.createPurchase(request)
        requests.append(("/sim/play/purchases", try Self.json(request)))
        return created
    }

    /// Google voids `purchase` (in full, or `quantity` units of it) at `at`.
    mutating func void(_ purchase: CreatedPlayPurchase, at: Date, reason: Int, source: Int, quantity: Int? = nil) throws {
        let millis = Int64((at.timeIntervalSince1970 * 1000).rounded())
        _ = try simulator.play.voidPurchase(
            purchase.purchaseToken, voidedReason: reason, voidedSource: source, voidedTimeMillis: millis,
            quantity: quantity)
        var body = ["voidedReason": reason, "voidedSource": source, "voidedTimeMillis": Int(millis)]
        if let quantity { body["quantity"] = quantity }
        requests.append(("/sim/play/purchases/\(purchase.purchaseToken)/void", try Self.json(body)))
    }

    /// `user`'s Android client uploads the purchase as it holds it (`getOriginalJson`, `getSignature`).
    mutating func upload(
        _ user: String, _ purchase: CreatedPlayPurchase, purchaseData: String? = nil, at: Date, device: String? = nil
    ) throws {
        let payload = try Self.json(["purchaseData": purchaseData ?? purchase.purchaseData, "signature": purchase.signature])
        let device = device ?? self.device()
        uploads.append(DemoWorld.UploadRow(
            user: user, kind: "play_purchase", payload: payload, username: nil,
            claimed: purchase.orderId ?? purchase.purchaseToken, device: device, uploadedAt: at))
    }

    /// The backend credits the order (the purchase token when Google gave no order id).
    mutating func credit(_ purchase: CreatedPlayPurchase, _ product: String? = nil, to user: String, quantity: Int = 1,
                         at: Date) {
        deliveries.append(DemoWorld.DeliveryRow(
            transaction: purchase.orderId ?? purchase.purchaseToken, user: user, product: product ?? purchase.productId,
            quantity: quantity, deliveredAt: at, store: "google_play"))
    }

    mutating func device(app: String? = nil) -> String {
        let models = ["Pixel 8", "SM-S918B", "Redmi Note 13", "V2309A", "PJZ110"]
        let os = ["13", "14", "15"]
        let model = models.randomElement(using: &random)!, system = os.randomElement(using: &random)!
        let version = Int.random(in: 0...3, using: &random)
        return #"{"model": "\#(model)", "os": "Android \#(system)", "app": "\#(app ?? "4.2.\(version)")"}"#
    }

    /// Normal life, then the accidents, one of each.
    mutating func generate(players: Int) throws {
        for index in 1...players {
            let user = String(format: "droid-%04d", index)
            for _ in 0..<Int.random(in: 1...2, using: &random) {
                let (product, _, _) = DemoWorld.catalogue.randomElement(using: &random)!
                let bought = now.addingTimeInterval(-Double.random(in: 3600...(2 * 86_400), using: &random))
                let purchase = try buy(product, by: user, at: bought)
                try upload(user, purchase, at: bought.addingTimeInterval(4))
                credit(purchase, to: user, at: bought.addingTimeInterval(6))
            }
        }
        try plantAccidents()
        try plantLeakClusters(from: players + 1)
    }

    /// Issue 39 item 4 (SPEC section 19): two clusters for the Insights page to find. A new build
    /// (4.3.0) whose purchase callback never reaches the server for most of its buyers, and an hour
    /// yesterday when the backend was down: every purchase of that hour uploaded, none credited.
    /// New players of their own, so the accidents above are as they were.
    mutating func plantLeakClusters(from first: Int) throws {
        var index = first
        func player() -> String {
            defer { index += 1 }
            return String(format: "droid-%04d", index)
        }
        let badBuild = 14
        for n in 0..<badBuild {
            let user = player()
            let bought = now.addingTimeInterval(-Double.random(in: 4 * 3600...(40 * 3600), using: &random))
            let purchase = try buy("com.hncs.szj.coin686", by: user, at: bought)
            try upload(user, purchase, at: bought.addingTimeInterval(4), device: device(app: "4.3.0"))
            // Four in fourteen get through (a retry that happened to work).
            if n % 4 == 3 { credit(purchase, to: user, at: bought.addingTimeInterval(6)) }
        }
        accidents.append("Play: app build 4.3.0 drops its purchase callback: \(badBuild - badBuild / 4) of its \(badBuild) purchases never credited")
        let outage = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 3600).rounded(.down) * 3600 - 20 * 3600)
        let outagePurchases = 25
        for _ in 0..<outagePurchases {
            let user = player()
            let bought = outage.addingTimeInterval(Double.random(in: 60...3540, using: &random))
            let (product, _, _) = DemoWorld.catalogue.randomElement(using: &random)!
            let purchase = try buy(product, by: user, at: bought)
            try upload(user, purchase, at: bought.addingTimeInterval(4))
        }
        let hour = Calendar(identifier: .gregorian).dateComponents(in: .gmt, from: outage).hour ?? 0
        accidents.append(String(format: "Play: the backend was down %02d:00–%02d:59 UTC yesterday: ", hour, hour)
            + "\(outagePurchases) purchases uploaded, none credited")
    }

    mutating func plantAccidents() throws {
        let day = now.addingTimeInterval(-86_400)
        func at(_ seconds: Double) -> Date { day.addingTimeInterval(seconds) }

        // The app was killed between Google's purchase sheet and its server: the client found the
        // purchase again on its next start and uploaded it, and nobody credited (or acknowledged) it.
        let killed = try buy("com.hncs.szj.coin1386", by: "droid-0011", at: day, acknowledged: false)
        try upload("droid-0011", killed, at: at(3600))
        accidents.append("Play: app killed after paying: \(killed.orderId!) of droid-0011 never credited")

        // Bought under one account (Play Billing's obfuscatedAccountId), credited to another.
        let misdelivered = try buy("com.hncs.szj.coin686", by: "droid-0012", at: day)
        try upload("droid-0013", misdelivered, at: at(60))
        credit(misdelivered, to: "droid-0013", at: at(61))
        accidents.append("Play: wrong account: droid-0012's \(misdelivered.orderId!) credited to droid-0013")

        // Credited twice by a retrying backend.
        let twice = try buy("com.hncs.szj.coin4886", by: "droid-0014", at: day)
        try upload("droid-0014", twice, at: at(5))
        for second in [6.0, 9.0] { credit(twice, to: "droid-0014", at: at(second)) }
        accidents.append("Play: double credit: \(twice.orderId!) credited twice to droid-0014")

        // Refunded by Google after delivery, and a partial refund of a three-pack.
        let refunded = try buy("com.hncs.szj.coin1386", by: "droid-0015", at: at(-86_400))
        try upload("droid-0015", refunded, at: at(-86_395))
        credit(refunded, to: "droid-0015", at: at(-86_394))
        try void(refunded, at: at(3600), reason: 1, source: 0)
        accidents.append("Play: refund after delivery: \(refunded.orderId!) of droid-0015 still credited")
        let pack = try buy("com.hncs.szj.coin42", by: "droid-0016", at: at(-86_400), quantity: 3)
        try upload("droid-0016", pack, at: at(-86_395))
        credit(pack, to: "droid-0016", quantity: 3, at: at(-86_394))
        try void(pack, at: at(7200), reason: 0, source: 1, quantity: 1)
        accidents.append("Play: 1 of 3 coin42 of \(pack.orderId!) refunded, all 3 still credited to droid-0016")

        // A licence tester's purchase (no order id, not charged) credited as real money.
        let tester = try buy("com.hncs.szj.coin4886", by: "droid-tester", at: day, test: true, withoutOrderID: true)
        try upload("droid-tester", tester, at: at(10))
        credit(tester, to: "droid-tester", at: at(11))
        accidents.append("Play: licence tester droid-tester's test purchase credited as real money")

        // One purchase (bound to no account) uploaded by two accounts, credited to both.
        let replayed = try buy("com.hncs.szj.coin1386", by: nil, at: day)
        for (user, minute) in [("droid-0017", 1.0), ("droid-0018", 90.0)] {
            try upload(user, replayed, at: at(minute * 60))
            credit(replayed, to: user, at: at(minute * 60 + 1))
        }
        accidents.append("Play: purchase token of \(replayed.orderId!) uploaded by droid-0017 and again by droid-0018")

        // A purchase rewritten by a cheat tool to name the expensive pack: the signature no longer
        // verifies, and an old backend credited it anyway.
        let genuine = try buy("com.hncs.szj.coin42", by: "droid-0019", at: day)
        let rewritten = genuine.purchaseData.replacingOccurrences(of: "com.hncs.szj.coin42", with: "com.hncs.szj.coin4886")
        let forgedOrder = orderID()
        var forged = genuine
        forged.purchaseData = rewritten.replacingOccurrences(of: genuine.orderId!, with: forgedOrder)
        forged.orderId = forgedOrder
        forged.productId = "com.hncs.szj.coin4886"
        try upload("droid-0019", forged, at: at(30))
        credit(forged, to: "droid-0019", at: at(31))
        accidents.append("Play: rewritten purchase \(forgedOrder) credited to droid-0019")

        // Order brushing: a cheap purchase used to claim an expensive product; and three packs
        // bought at once, one credited.
        let cheap = try buy("com.hncs.szj.coin42", by: "droid-0020", at: day)
        try upload("droid-0020", cheap, at: at(20))
        credit(cheap, "com.hncs.szj.coin4886", to: "droid-0020", at: at(21))
        accidents.append("Play: a coin42 purchase \(cheap.orderId!) credited as coin4886 to droid-0020")
        let bulk = try buy("com.hncs.szj.coin42", by: "droid-0021", at: day, quantity: 3)
        try upload("droid-0021", bulk, at: at(20))
        credit(bulk, to: "droid-0021", at: at(21))
        accidents.append("Play: quantity 3 bought in \(bulk.orderId!), 1 credited to droid-0021")

        // The app credits but its acknowledge call fails: two days in, the job's acknowledgement
        // rescue acknowledges it before Google's three days run out.
        let unacknowledged = try buy("com.hncs.szj.coin686", by: "droid-0022", at: at(-86_400), acknowledged: false)
        try upload("droid-0022", unacknowledged, at: at(-86_395))
        credit(unacknowledged, to: "droid-0022", at: at(-86_394))
        accidents.append("Play: \(unacknowledged.orderId!) of droid-0022 credited, never acknowledged (rescued)")
        // Too late for one: four days ago, never acknowledged, so Google refunded it (reason 8).
        let lapsed = try buy("com.hncs.szj.coin686", by: "droid-0023", at: at(-3 * 86_400), acknowledged: false)
        try upload("droid-0023", lapsed, at: at(-3 * 86_400 + 5))
        credit(lapsed, to: "droid-0023", at: at(-3 * 86_400 + 6))
        try void(lapsed, at: at(-3 * 86_400 + PlaySimulator.acknowledgementDeadline), reason: 8, source: 2)
        accidents.append("Play: \(lapsed.orderId!) of droid-0023 refunded by Google for want of an acknowledgement")

        // Never a finding: a purchase still pending (cash at a shop), uploaded and not credited.
        let pending = try buy("com.hncs.szj.coin210", by: "droid-0024", at: at(600), acknowledged: false, pending: true)
        try upload("droid-0024", pending, at: at(610))
    }

    /// The requests for the running simulator, one a line.
    var requestLines: String { requests.map { "POST \($0.path)\t\($0.body)\n" }.joined() }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
