import AppStoreSimulator
import Foundation
import Postgres
@testable import Reconciliation
import TestSupport

/// Issue 38 item 8: Android players in the same randomized nights (SPEC section 18). Each night
/// brings Google Play purchases (bound by `obfuscatedAccountId` or not, pending ones paid or
/// cancelled later, test purchases), uploaded tonight, late or never and credited well or badly
/// the App Store's ways; voids in full and by quantity, told by the voided list (every run, with
/// the Developer API), by a real-time notification the receiver stores, or by nobody (no API);
/// purchases the app never acknowledged, refunded by Google three days on unless the job's
/// acknowledgement rescue came first; forged, replayed and foreign purchases.
///
/// Time: the world's purchases lie in its past, but Google stamps a void when it happens, and the
/// voided list is read up to the real clock: a void here is stamped two minutes before the real
/// moment it is drawn, so that it falls inside the next run's window as a real void would.
extension MultiNightWorld {
    static let playPackage = "com.hncs.szj.android"
    static let foreignPlayPackage = "com.other.game.android"

    /// What the generator knows of a Play purchase it made.
    struct PlayPurchase {
        var order: String
        var token: String
        var buyer: String
        var uploader: String
        var product: String
        var quantity: Int
        /// The purchase's `obfuscatedAccountId`: the buyer, its SHA-256, or none.
        var account: String?
        var purchasedAt: Date
        var night: Int
        /// What the client holds now (its `purchaseData` and signature).
        var client: CreatedPlayPurchase
        var pending: Bool
        var cancelled = false
        /// When it was paid (a pending purchase: the night it completed); Google's three days run from it.
        var paidAt: Date
        var refundable: Int
        var voided = false
        /// The app acknowledged it when it was bought (else only the job's rescue can).
        var acknowledgedByTheApp: Bool
        var rescued = false
        /// A subscription's order: its first, or a renewal (`GPA.…..N`), voided by its own order id.
        var subscription = false
        var renewal = false
        /// A subscription's: when its current period ends (its next renewal's charge).
        var renewsAt: Date?
    }

    /// Night `night`'s Google Play events, drawn from Play's own stream.
    func generatePlay() throws {
        swap(&random, &playRandom)
        playing = true
        defer {
            playing = false
            swap(&random, &playRandom)
        }
        let due = playLater.filter { $0.night == night }
        playLater.removeAll { $0.night == night }
        for work in due { try work.action(self) }
        try refundTheUnacknowledged()
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45: try playPurchase()
            case 45..<55: try playSubscribe()
            case 55..<78: try playVoid()
            default: try playForgedReplayedOrForeign()
            }
        }
    }

    /// A fresh order id (`GPA.dddd-dddd-dddd-ddddd`) and purchase token, from the seed.
    func newPlayIDs() -> (order: String, token: String) {
        nextTransaction += 1
        let order = String(
            format: "GPA.%04d-%04d-%04d-%05d", Int(configuration.seed % 10_000), night,
            Int.random(in: 0..<10_000, using: &random), nextTransaction)
        let token = "mn\(configuration.seed)-\(nextTransaction)-" + String(format: "%016llx", random.next())
        return (order, token)
    }

    static func playPayload(_ client: CreatedPlayPurchase, purchaseData: String? = nil) throws -> String {
        let object = ["purchaseData": purchaseData ?? client.purchaseData, "signature": client.signature]
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    func uploadPlay(_ purchase: PlayPurchase, by user: String? = nil, purchaseData: String? = nil, at: Date) throws {
        try upload(user ?? purchase.uploader, kind: "play_purchase",
                   payload: try Self.playPayload(purchase.client, purchaseData: purchaseData),
                   claimed: purchase.order, at: at)
    }

    /// The purchase as the app credits it (the App Store's `credit` reads its id, uploader, product
    /// and quantity).
    func creditShape(_ purchase: PlayPurchase) -> Purchase {
        Purchase(id: purchase.order, buyer: purchase.buyer, uploader: purchase.uploader, product: purchase.product,
                 quantity: purchase.quantity, jws: false, customer: "play-\(purchase.buyer)",
                 purchasedAt: purchase.purchasedAt, night: purchase.night)
    }

    func playPurchase() throws {
        let buyer = pick(users)
        let uploader = !active.contains(buyer) || chance(0.2) ? other(than: buyer) : buyer
        let (product, quantity): (String, Int) = switch Int.random(in: 0..<10, using: &random) {
        case 0..<6: ("coin42", 1)
        case 6..<8: ("coins3", 3)
        default: ("unlock", 1)
        }
        let binding = Int.random(in: 0..<10, using: &random)
        let account: String? = binding < 5 ? buyer : binding < 7 ? try sha256(buyer) : nil
        let test = chance(0.06)
        let pending = !test && chance(0.08)
        let acknowledged = chance(0.75)
        let at = moment()
        let (order, token) = newPlayIDs()
        var request = PlayPurchaseRequest(
            productId: product, quantity: quantity, obfuscatedAccountId: account, testPurchase: test, pending: pending,
            acknowledged: acknowledged, purchaseTimeMillis: Int64(at.timeIntervalSince1970 * 1000))
        request.orderId = order
        request.purchaseToken = token
        request.currency = "CNY"
        let client = try simulator.play.createPurchase(request)
        var purchase = PlayPurchase(
            order: order, token: token, buyer: buyer, uploader: uploader, product: product, quantity: quantity,
            account: account, purchasedAt: at, night: night, client: client, pending: pending, paidAt: at,
            refundable: quantity, acknowledgedByTheApp: acknowledged)
        let bound = account == nil ? "unbound" : account == buyer ? "account \(buyer)" : "account sha256(\(buyer))"
        count("Play purchase\(test ? ", a test purchase" : "")\(pending ? ", pending" : ""), \(bound.split(separator: " ")[0])")
        note(order, "Play purchase of \(quantity) \(product) by \(buyer), \(bound), uploader \(uploader)"
             + "\(test ? ", a licence tester's" : "")\(acknowledged ? "" : ", the app never acknowledges it")")
        try tellPlay(purchase, kind: .oneTime, what: "purchase")

        if pending {
            // The client sees state 4 (pending) and uploads it; days later the payment clears or
            // is cancelled, and only a paid purchase is credited (and uploaded again as paid).
            if chance(0.7) { try uploadPlay(purchase, at: at.addingTimeInterval(60)) }
            let wait = Int.random(in: 1...2, using: &random)
            let index = playPurchases.count
            try defer_(wait, "pending purchase settles") { world in
                if world.chance(0.7) {
                    world.playPurchases[index].client = try world.simulator.play.completePendingPurchase(token)
                    world.playPurchases[index].pending = false
                    world.playPurchases[index].paidAt = world.moment()
                    let paid = world.playPurchases[index]
                    world.count("Play pending purchase paid")
                    world.note(order, "the pending payment clears")
                    try world.uploadPlay(paid, at: paid.paidAt)
                    try world.credit(world.creditShape(paid), at: paid.paidAt)
                } else {
                    _ = try world.simulator.play.cancelPendingPurchase(token)
                    world.playPurchases[index].pending = false
                    world.playPurchases[index].cancelled = true
                    world.count("Play pending purchase cancelled")
                    world.note(order, "the pending payment is cancelled, nothing credited")
                }
            }
            playPurchases.append(purchase)
            return
        }

        // The upload: tonight, days late, stored late with the client's old timestamp, or never (the
        // process killed around the payment sheet).
        try uploadSometime(order, boughtAt: at, shares: (tonight: 62, late: 15, lateOld: 13), store: "Play ") {
            world, uploadedAt in try world.uploadPlay(purchase, at: uploadedAt)
        }
        purchase.paidAt = at
        playPurchases.append(purchase)
        try credit(creditShape(purchase), at: at)
    }

    /// A moment of night `n`'s window, as ``moment()`` draws one for tonight.
    func moment(ofNight n: Int) -> Date {
        until(n - 1).addingTimeInterval(Double(Int.random(in: 60...(20 * 60), using: &random)) * 60)
    }

    static func millis(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }

    /// An Android subscription (`vip_month`): its first order bought tonight, uploaded and credited
    /// as a one-time purchase is; every one or two nights Google charges a renewal, an order of
    /// its own on the same token (``renew(_:)``), until the buyer stops it or Google voids an order.
    func playSubscribe() throws {
        let buyer = pick(users)
        let uploader = !active.contains(buyer) || chance(0.2) ? other(than: buyer) : buyer
        let binding = Int.random(in: 0..<10, using: &random)
        let account: String? = binding < 5 ? buyer : binding < 7 ? try sha256(buyer) : nil
        let acknowledged = chance(0.85)
        let at = moment()
        let wait = Int.random(in: 1...2, using: &random)
        let renewsAt = moment(ofNight: night + wait)
        let (order, token) = newPlayIDs()
        var request = PlayPurchaseRequest(
            productId: "vip_month", kind: .subscription, obfuscatedAccountId: account, acknowledged: acknowledged,
            purchaseTimeMillis: Self.millis(at))
        request.orderId = order
        request.purchaseToken = token
        request.currency = "CNY"
        request.expiryTimeMillis = Self.millis(renewsAt)
        let client = try simulator.play.createPurchase(request)
        var purchase = PlayPurchase(
            order: order, token: token, buyer: buyer, uploader: uploader, product: "vip_month", quantity: 1,
            account: account, purchasedAt: at, night: night, client: client, pending: false, paidAt: at, refundable: 1,
            acknowledgedByTheApp: acknowledged)
        purchase.subscription = true
        purchase.renewsAt = renewsAt
        let bound = account == nil ? "unbound" : account == buyer ? "account \(buyer)" : "account sha256(\(buyer))"
        count("Play subscription, \(bound.split(separator: " ")[0])")
        note(order, "Play subscription vip_month by \(buyer), \(bound), uploader \(uploader)"
             + "\(acknowledged ? "" : ", the app never acknowledges it"), renews on night \(night + wait)")
        try tellPlay(purchase, kind: .subscription, what: "subscription", notificationType: 4)
        try uploadSometime(order, boughtAt: at, shares: (tonight: 62, late: 15, lateOld: 13), store: "Play ") {
            world, uploadedAt in try world.uploadPlay(purchase, at: uploadedAt)
        }
        let index = playPurchases.count
        playPurchases.append(purchase)
        try credit(creditShape(purchase), at: at)
        try defer_(wait, "subscription renews") { world in try world.renew(index) }
    }

    /// Google charges the subscription whose latest order is `playPurchases[index]` again: a new
    /// order (`GPA.…..N`) on its token, at the end of the period. The app's server hears of it (its
    /// notification) and credits it, well or badly the usual ways, or not at all; the device
    /// uploads the renewed purchase sometimes (it renews in the background), and Google's
    /// notification reaches the receiver sometimes.
    func renew(_ index: Int) throws {
        let latest = playPurchases[index]
        guard let at = latest.renewsAt, let held = simulator.play.purchase(latest.token), !held.voided else { return }
        if held.renewals >= 4 || chance(0.15) {
            count("Play subscription stopped by its buyer")
            note(latest.order, "the buyer stops the subscription: no more renewals")
            return
        }
        let wait = Int.random(in: 1...2, using: &random)
        let renewsAt = moment(ofNight: night + wait)
        let client = try simulator.play.renewSubscription(latest.token, expiryTimeMillis: Self.millis(renewsAt))
        guard let order = client.orderId else { throw TestSetupError("a renewal without an order id") }
        var renewal = latest
        renewal.order = order
        renewal.client = client
        renewal.purchasedAt = at
        renewal.paidAt = at
        renewal.night = night
        renewal.refundable = 1
        renewal.acknowledgedByTheApp = true
        renewal.rescued = false
        renewal.renewal = true
        renewal.renewsAt = renewsAt
        count("Play subscription renewal")
        note(order, "Google renews \(latest.order)'s subscription for \(latest.buyer), renews on night \(night + wait)")
        try tellPlay(renewal, kind: .subscription, what: "renewal", notificationType: 2)
        try uploadSometime(order, boughtAt: at, shares: (tonight: 30, late: 10, lateOld: 5), store: "Play renewal ") {
            world, uploadedAt in try world.uploadPlay(renewal, at: uploadedAt)
        }
        let next = playPurchases.count
        playPurchases.append(renewal)
        try credit(creditShape(renewal), at: at)
        try defer_(wait, "subscription renews") { world in try world.renew(next) }
    }

    /// Google refunds a purchase in full, or some of its units (a quantity-based partial refund).
    func playVoid() throws {
        let candidates = playPurchases.indices.filter {
            !playPurchases[$0].voided && !playPurchases[$0].pending && !playPurchases[$0].cancelled
                && playPurchases[$0].refundable > 0 && simulator.play.purchase(playPurchases[$0].token)?.voided != true
        }
        guard !candidates.isEmpty else { return try playPurchase() }
        let index = pick(candidates)
        let purchase = playPurchases[index]
        let partial = purchase.refundable > 1 && chance(0.5)
        let units = partial ? Int.random(in: 1..<purchase.refundable, using: &random) : nil
        _ = try simulator.play.voidPurchase(
            purchase.token, orderId: purchase.subscription ? purchase.order : nil,
            voidedReason: pick([0, 1, 2, 3, 4, 5, 6, 7]), voidedSource: pick([0, 1, 2]),
            voidedTimeMillis: Self.voidStamp(), quantity: units)
        if let units {
            playPurchases[index].refundable -= units
            count("Play partial refund")
            note(purchase.order, "Google refunds \(units) of its \(purchase.refundable) refundable units")
        } else {
            playPurchases[index].refundable = 0
            playPurchases[index].voided = true
            count(purchase.renewal ? "Play refund of a subscription renewal" : purchase.subscription
                ? "Play refund of a subscription's first order" : "Play refund")
            note(purchase.order, "Google refunds it\(purchase.subscription ? "; the subscription ends" : "")")
        }
        try tellPlay(purchase, kind: .voided, what: "void")
    }

    /// Google's three days: a paid purchase still unacknowledged (neither the app nor the job's
    /// rescue acknowledged it) is refunded, `voidedReason` 8 and `voidedSource` 2.
    func refundTheUnacknowledged() throws {
        let deadline = until(night - 1).addingTimeInterval(-PlaySimulator.acknowledgementDeadline)
        for index in playPurchases.indices {
            let purchase = playPurchases[index]
            // A subscription is acknowledged once, its first order; renewals need none.
            guard !purchase.voided, !purchase.pending, !purchase.cancelled, !purchase.renewal, purchase.paidAt <= deadline,
                  let held = simulator.play.purchase(purchase.token), !held.acknowledged, !held.voided
            else { continue }
            _ = try simulator.play.voidPurchase(
                purchase.token, orderId: purchase.subscription ? purchase.order : nil, voidedReason: 8, voidedSource: 2,
                voidedTimeMillis: Self.voidStamp())
            playPurchases[index].voided = true
            playPurchases[index].refundable = 0
            count("Play refund for want of an acknowledgement")
            note(purchase.order, "Google refunds it: nobody acknowledged it within three days")
            try tellPlay(purchase, kind: .voided, what: "void for want of an acknowledgement")
        }
        for index in playPurchases.indices where !playPurchases[index].acknowledgedByTheApp && !playPurchases[index].rescued
            && simulator.play.purchase(playPurchases[index].token)?.acknowledged == true
        {
            playPurchases[index].rescued = true
            count("Play purchase acknowledged by the job's rescue")
            note(playPurchases[index].order, "acknowledged by the job")
        }
    }

    /// A void stamped as Google stamps it: when it happens (two minutes before now, inside the
    /// window the next run reads).
    static func voidStamp() -> Int64 {
        Int64(Date().addingTimeInterval(-120).timeIntervalSince1970 * 1000)
    }

    /// A real-time developer notification of `purchase`, stored as the receiver stores a push
    /// (sometimes: Pub/Sub's push is not the only way the news comes, and not always delivered).
    /// Only the receiver's nights read them; the nightly run relies on the voided list.
    func tellPlay(
        _ purchase: PlayPurchase, kind: PlayNotificationRequest.Kind, what: String, notificationType: Int? = nil
    ) throws {
        guard configuration.receiver, chance(0.6) else { return }
        let notification = try simulator.play.developerNotification(
            PlayNotificationRequest(kind: kind, purchaseToken: purchase.token, notificationType: notificationType))
        let messageID = "\(configuration.seed)\(nextTransaction)\(Int.random(in: 100...999, using: &random))"
        let published = ISO8601DateFormatter().string(from: moment())
        let envelope: [String: Any] = [
            "message": [
                "data": Data(notification.utf8).base64EncodedString(), "messageId": messageID,
                "publishTime": published,
            ],
            "subscription": "projects/multi-night/subscriptions/play-rtdn",
        ]
        let body = try JSONSerialization.data(withJSONObject: envelope, options: [.sortedKeys])
        let push = PlayNotificationReceiver(pushToken: nil).read(body)
        guard push.problem == nil else { throw TestSetupError("the world's push is not a notification: \(push.problem!)") }
        _ = try PlayNotificationReceiver(pushToken: nil).store(push, on: connection)
        count("Play \(what) told by a notification")
        note(purchase.order, "a real-time notification of the \(what) stored")
    }

    /// A purchase's data altered and credited (its signature no longer verifies), another account
    /// replaying a purchase token, or a purchase of another app.
    func playForgedReplayedOrForeign() throws {
        let user = pick(active)
        let at = moment()
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            guard let victim = playPurchases.last else { return try playPurchase() }
            let (order, _) = newPlayIDs()
            let forged = victim.client.purchaseData.replacingOccurrences(of: victim.order, with: order)
            try upload(user, kind: "play_purchase", payload: try Self.playPayload(victim.client, purchaseData: forged),
                       claimed: order, at: at)
            try deliver(order, user, "coin4886", quantity: 1, at: at.addingTimeInterval(60))
            count("Play purchase data forged and credited")
            note(order, "a forged Play purchase (\(victim.order)'s data with this order id) uploaded by \(user) and credited")
        case 1:
            guard let victim = playPurchases.filter({ !$0.pending && !$0.cancelled }).last else {
                return try playPurchase()
            }
            try uploadPlay(victim, by: user, at: at)
            count("Play purchase replayed by another account")
            note(victim.order, "its purchase uploaded again by \(user)")
        default:
            let (order, token) = newPlayIDs()
            var request = PlayPurchaseRequest(
                packageName: Self.foreignPlayPackage, productId: "coin42", obfuscatedAccountId: user, acknowledged: true,
                purchaseTimeMillis: Int64(at.timeIntervalSince1970 * 1000))
            request.orderId = order
            request.purchaseToken = token
            let client = try simulator.play.createPurchase(request)
            try upload(user, kind: "play_purchase", payload: try Self.playPayload(client), claimed: order, at: at)
            count("Play purchase of another app")
            note(order, "another app's Play purchase uploaded by \(user)")
        }
    }
}
