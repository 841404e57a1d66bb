import Foundation

/// A purchase to create (`POST /sim/play/purchases`); everything but `productId` has a default.
public struct PlayPurchaseRequest: Sendable, Codable, Hashable {
    /// Default: the first configured package.
    public var packageName: String?
    public var productId: String
    /// Default `one_time`.
    public var kind: PlaySimulatedPurchase.Kind?
    /// Default 1 (multi-quantity purchases are one-time products only).
    public var quantity: Int?
    public var obfuscatedAccountId: String?
    public var obfuscatedProfileId: String?
    /// Default false.
    public var testPurchase: Bool?
    /// Default false: paid at once.
    public var pending: Bool?
    /// Default false: the app has not acknowledged it yet.
    public var acknowledged: Bool?
    /// Default now.
    public var purchaseTimeMillis: Int64?
    /// Default: a fresh `GPA.dddd-dddd-dddd-ddddd`.
    public var orderId: String?
    /// A licence tester's purchase: Google gives it no order id, the token stands for it.
    public var withoutOrderId: Bool?
    /// Default: a fresh token.
    public var purchaseToken: String?
    /// Subscriptions: default true.
    public var autoRenewing: Bool?
    /// Subscriptions: default purchase time plus ``periodDays``.
    public var expiryTimeMillis: Int64?
    /// Subscriptions: the length of a period, default 30 days.
    public var periodDays: Int?
    public var linkedPurchaseToken: String?
    /// One unit's price in micros, default 990000.
    public var priceMicros: Int64?
    /// Default `USD`.
    public var currency: String?

    public init(
        packageName: String? = nil, productId: String, kind: PlaySimulatedPurchase.Kind? = nil, quantity: Int? = nil,
        obfuscatedAccountId: String? = nil, testPurchase: Bool? = nil, pending: Bool? = nil,
        acknowledged: Bool? = nil, purchaseTimeMillis: Int64? = nil, withoutOrderId: Bool? = nil
    ) {
        self.packageName = packageName
        self.productId = productId
        self.kind = kind
        self.quantity = quantity
        self.obfuscatedAccountId = obfuscatedAccountId
        self.testPurchase = testPurchase
        self.pending = pending
        self.acknowledged = acknowledged
        self.purchaseTimeMillis = purchaseTimeMillis
        self.withoutOrderId = withoutOrderId
    }
}

/// What the Android client would hold after a purchase: `Purchase.getOriginalJson()` and
/// `Purchase.getSignature()`, with the ids a test needs.
public struct CreatedPlayPurchase: Sendable, Codable, Hashable {
    /// The compact JSON exactly as signed.
    public var purchaseData: String
    /// base64 RSA PKCS#1 v1.5 SHA-1 over ``purchaseData``'s bytes, with the package's licence key.
    public var signature: String
    /// The order the client saw (a renewal's for a renewal); nil for a licence tester's purchase.
    public var orderId: String?
    public var purchaseToken: String
    public var packageName: String
    public var productId: String
    /// Subscriptions: when the current period ends.
    public var expiryTimeMillis: Int64?
}

extension PlaySimulator {
    /// Google refunds a purchase not acknowledged within three days (`voidedReason` 8).
    public static let acknowledgementDeadline: TimeInterval = 3 * 24 * 3600

    /// Creates a purchase and answers what the client holds.
    public func createPurchase(_ request: PlayPurchaseRequest) throws -> CreatedPlayPurchase {
        let packageName = request.packageName ?? packageNames[0]
        let kind = request.kind ?? .oneTime
        let quantity = request.quantity ?? 1
        guard !request.productId.isEmpty else { throw SimulatorRequestError(description: "productId is required") }
        guard quantity >= 1, kind == .oneTime || quantity == 1 else {
            throw SimulatorRequestError(description: "quantity must be at least 1 (and 1 for a subscription)")
        }
        if let account = request.obfuscatedAccountId, account.count > 64 {
            // Play Billing refuses longer ids (BillingFlowParams.setObfuscatedAccountId).
            throw SimulatorRequestError(description: "obfuscatedAccountId is longer than 64 characters")
        }
        let now = Date().millisecondsSince1970
        let purchased = request.purchaseTimeMillis ?? now
        let pending = request.pending ?? false
        let period = Int64(request.periodDays ?? 30) * 86_400_000
        let purchase = try store.withLock { inner -> PlaySimulatedPurchase in
            let token = request.purchaseToken ?? Self.newToken()
            guard inner.purchases[token] == nil else {
                throw SimulatorRequestError(description: "purchase token \(token) exists", status: .conflict)
            }
            var orderId: String?
            if request.withoutOrderId != true {
                orderId = request.orderId ?? Self.newOrderID(avoiding: inner.orders)
                guard inner.orders[orderId!] == nil else {
                    throw SimulatorRequestError(description: "order \(orderId!) exists", status: .conflict)
                }
            }
            let purchase = PlaySimulatedPurchase(
                packageName: packageName, productId: request.productId, kind: kind, purchaseToken: token,
                orderId: orderId, purchaseTimeMillis: purchased, quantity: quantity, refundableQuantity: quantity,
                obfuscatedAccountId: request.obfuscatedAccountId, obfuscatedProfileId: request.obfuscatedProfileId,
                testPurchase: request.testPurchase ?? false, pending: pending, pendingCanceled: false,
                acknowledged: request.acknowledged ?? false, consumed: false,
                autoRenewing: kind == .subscription ? (request.autoRenewing ?? true) : false,
                expiryTimeMillis: kind == .subscription ? (request.expiryTimeMillis ?? purchased + period) : nil,
                renewalTimesMillis: [], completionTimeMillis: pending ? nil : purchased, voided: false,
                linkedPurchaseToken: request.linkedPurchaseToken, priceMicros: request.priceMicros ?? 990_000,
                currency: request.currency ?? "USD", regionCode: "US")
            inner.purchases[token] = purchase
            if let orderId { inner.orders[orderId] = token }
            inner.stats.purchasesCreated += 1
            return purchase
        }
        return try clientPurchase(purchase)
    }

    /// Renews a subscription: a new order on the same token (`GPA.…..0`, `..1`, …), its expiry moved
    /// one period on (or to `expiryTimeMillis`).
    public func renewSubscription(_ token: String, expiryTimeMillis: Int64? = nil, periodDays: Int = 30) throws
        -> CreatedPlayPurchase
    {
        let purchase = try store.withLock { inner -> PlaySimulatedPurchase in
            guard var purchase = inner.purchases[token] else { throw Self.noPurchase(token) }
            guard purchase.kind == .subscription else {
                throw SimulatorRequestError(description: "\(token) is not a subscription")
            }
            guard !purchase.voided, !purchase.pending, !purchase.pendingCanceled else {
                throw SimulatorRequestError(description: "\(token) cannot renew: voided or not paid")
            }
            let from = max(purchase.expiryTimeMillis ?? purchase.purchaseTimeMillis, 0)
            purchase.expiryTimeMillis = expiryTimeMillis ?? from + Int64(periodDays) * 86_400_000
            if let first = purchase.orderId { inner.orders["\(first)..\(purchase.renewals)"] = token }
            purchase.renewalTimesMillis.append(from)
            purchase.autoRenewing = true
            inner.purchases[token] = purchase
            return purchase
        }
        return try clientPurchase(purchase)
    }

    /// A pending purchase paid: the client's purchase now says `purchaseState` 0.
    public func completePendingPurchase(_ token: String) throws -> CreatedPlayPurchase {
        let purchase = try store.withLock { inner -> PlaySimulatedPurchase in
            guard var purchase = inner.purchases[token] else { throw Self.noPurchase(token) }
            guard purchase.pending, !purchase.pendingCanceled else {
                throw SimulatorRequestError(description: "\(token) is not pending")
            }
            purchase.pending = false
            purchase.completionTimeMillis = Date().millisecondsSince1970
            inner.purchases[token] = purchase
            return purchase
        }
        return try clientPurchase(purchase)
    }

    /// A pending purchase never paid.
    public func cancelPendingPurchase(_ token: String) throws -> PlaySimulatedPurchase {
        try store.withLock { inner in
            guard var purchase = inner.purchases[token] else { throw Self.noPurchase(token) }
            guard purchase.pending else { throw SimulatorRequestError(description: "\(token) is not pending") }
            purchase.pendingCanceled = true
            inner.purchases[token] = purchase
            return purchase
        }
    }

    /// The client acknowledges (Play Billing's `acknowledgePurchase`), with the API's rules.
    public func acknowledgeFromClient(_ token: String) throws -> PlaySimulatedPurchase {
        try store.withLock { inner in
            guard var purchase = inner.purchases[token] else { throw Self.noPurchase(token) }
            if let refusal = Self.acknowledgementRefusal(purchase) { throw refusal }
            purchase.acknowledged = true
            inner.purchases[token] = purchase
            return purchase
        }
    }

    /// Why a purchase cannot be acknowledged, as the API says it (nil: it can).
    static func acknowledgementRefusal(_ purchase: PlaySimulatedPurchase) -> SimulatorRequestError? {
        if purchase.voided || purchase.pendingCanceled {
            return SimulatorRequestError(description: "productNotOwnedByUser")
        }
        if purchase.acknowledged || purchase.pending {
            return SimulatorRequestError(description: "invalidPurchaseState")
        }
        return nil
    }

    /// Voids a purchase: in full (`quantity` nil), or `quantity` units of a one-time purchase (a
    /// quantity-based partial refund; refunding the rest voids it in full). `orderId` names a
    /// subscription's renewal (default: its latest order). The void is listed by
    /// `voidedpurchases` from `voidedTimeMillis` (default now) for 30 days.
    public func voidPurchase(
        _ token: String, orderId: String? = nil, voidedReason: Int = 0, voidedSource: Int = 0,
        voidedTimeMillis: Int64? = nil, quantity: Int? = nil
    ) throws -> PlayVoidRecord {
        guard (0...8).contains(voidedReason), (0...2).contains(voidedSource) else {
            throw SimulatorRequestError(description: "voidedReason is 0…8 and voidedSource 0…2")
        }
        let at = voidedTimeMillis ?? Date().millisecondsSince1970
        return try store.withLock { inner in
            guard var purchase = inner.purchases[token] else { throw Self.noPurchase(token) }
            guard !purchase.voided else { throw SimulatorRequestError(description: "\(token) is voided already") }
            guard !purchase.pending, !purchase.pendingCanceled else {
                throw SimulatorRequestError(description: "\(token) was never paid")
            }
            var voidedOrder = Self.latestOrderID(purchase)
            if let orderId {
                guard inner.orders[orderId] == token else {
                    throw SimulatorRequestError(description: "order \(orderId) is not \(token)'s", status: .notFound)
                }
                voidedOrder = orderId
            }
            var voidedQuantity: Int?
            var partial = false
            if let quantity {
                guard purchase.kind == .oneTime, quantity >= 1, quantity <= purchase.refundableQuantity else {
                    throw SimulatorRequestError(
                        description: "a partial refund is 1…\(purchase.refundableQuantity) units of a one-time purchase"
                    )
                }
                voidedQuantity = quantity
                partial = quantity < purchase.refundableQuantity
                purchase.refundableQuantity -= quantity
            } else {
                // After partial refunds, the rest is refunded by quantity too.
                if purchase.refundableQuantity < purchase.quantity { voidedQuantity = purchase.refundableQuantity }
                purchase.refundableQuantity = 0
            }
            if !partial {
                purchase.voided = true
                if purchase.kind == .subscription {
                    purchase.autoRenewing = false
                    purchase.expiryTimeMillis = min(purchase.expiryTimeMillis ?? at, at)
                }
            }
            inner.purchases[token] = purchase
            inner.voidSequence += 1
            let record = PlayVoidRecord(
                packageName: purchase.packageName, purchaseToken: token, orderId: voidedOrder,
                purchaseTimeMillis: purchase.purchaseTimeMillis, voidedTimeMillis: at, voidedSource: voidedSource,
                voidedReason: voidedReason, voidedQuantity: voidedQuantity, partial: partial, kind: purchase.kind,
                sequence: inner.voidSequence)
            inner.voids.append(record)
            return record
        }
    }

    /// What Google does three days after an unacknowledged purchase was paid: it refunds it
    /// (`voidedReason` 8, `voidedSource` 2). `now` lets a test skip the three days.
    public func expireUnacknowledged(now: Date = Date()) throws -> [PlayVoidRecord] {
        let deadline = (now.addingTimeInterval(-Self.acknowledgementDeadline)).millisecondsSince1970
        let due = store.withLock { inner in
            inner.purchases.values.filter { purchase in
                !purchase.acknowledged && !purchase.voided && !purchase.pending && !purchase.pendingCanceled
                    && (purchase.completionTimeMillis ?? purchase.purchaseTimeMillis) <= deadline
            }.map(\.purchaseToken).sorted()
        }
        return try due.map { token in
            let paid = store.purchase(token).map { $0.completionTimeMillis ?? $0.purchaseTimeMillis } ?? deadline
            return try voidPurchase(
                token, voidedReason: 8, voidedSource: 2,
                voidedTimeMillis: paid + Int64(Self.acknowledgementDeadline * 1000))
        }
    }

    /// The purchase as the client holds it now: `purchaseData` and its signature.
    func clientPurchase(_ purchase: PlaySimulatedPurchase) throws -> CreatedPlayPurchase {
        let data = Self.purchaseData(purchase)
        return CreatedPlayPurchase(
            purchaseData: data, signature: try licenseKey(for: purchase.packageName).signature(for: data),
            orderId: Self.latestOrderID(purchase), purchaseToken: purchase.purchaseToken,
            packageName: purchase.packageName, productId: purchase.productId,
            expiryTimeMillis: purchase.expiryTimeMillis)
    }

    /// The purchase's latest order: a subscription's last renewal (`GPA.…..n`), else its own.
    static func latestOrderID(_ purchase: PlaySimulatedPurchase) -> String? {
        guard let first = purchase.orderId else { return nil }
        return purchase.renewals == 0 ? first : "\(first)..\(purchase.renewals - 1)"
    }

    /// Every order of the purchase, first to latest.
    static func orderIDs(_ purchase: PlaySimulatedPurchase) -> [String] {
        guard let first = purchase.orderId else { return [] }
        return [first] + (0..<purchase.renewals).map { "\(first)..\($0)" }
    }

    /// `Purchase.getOriginalJson()`: compact, no spaces, in the field order Play Billing writes
    /// (orderId, packageName, productId, purchaseTime, purchaseState, purchaseToken, …,
    /// quantity, autoRenewing, acknowledged). The job must verify these bytes as they are.
    static func purchaseData(_ purchase: PlaySimulatedPurchase) -> String {
        var fields: [(String, String)] = []
        if let order = latestOrderID(purchase) { fields.append(("orderId", jsonString(order))) }
        fields.append(("packageName", jsonString(purchase.packageName)))
        fields.append(("productId", jsonString(purchase.productId)))
        fields.append(("purchaseTime", String(purchase.purchaseTimeMillis)))
        // Play Billing's JSON says 0 for purchased and 4 for pending (the Purchase.PurchaseState
        // constants, 1 and 2, are not what the JSON carries).
        fields.append(("purchaseState", purchase.pending ? "4" : "0"))
        fields.append(("purchaseToken", jsonString(purchase.purchaseToken)))
        if purchase.testPurchase { fields.append(("purchaseType", "0")) }
        if let account = purchase.obfuscatedAccountId { fields.append(("obfuscatedAccountId", jsonString(account))) }
        if let profile = purchase.obfuscatedProfileId { fields.append(("obfuscatedProfileId", jsonString(profile))) }
        fields.append(("quantity", String(purchase.quantity)))
        if purchase.kind == .subscription { fields.append(("autoRenewing", purchase.autoRenewing ? "true" : "false")) }
        fields.append(("acknowledged", purchase.acknowledged ? "true" : "false"))
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// A JSON string literal, escaped as Android's org.json escapes (`/` as `\/`).
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += "\\/"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Google's order ids: `GPA.` and 4-4-4-5 digits.
    static func newOrderID(avoiding existing: [String: String]) -> String {
        while true {
            func digits(_ count: Int) -> String { String((0..<count).map { _ in "0123456789".randomElement()! }) }
            let id = "GPA.33\(digits(2))-\(digits(4))-\(digits(4))-\(digits(5))"
            if existing[id] == nil { return id }
        }
    }

    /// Purchase tokens look like `abcdefghijklmnopqrstuvwx.AO-J1Oz…`: 24 letters, a dot, then base64url.
    static func newToken() -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let tail = (0..<64).map { _ in UInt8.random(in: 0...255) }
        return String((0..<24).map { _ in letters.randomElement()! }) + ".AO-J1O" + JWSBase64URL.encode(tail)
    }

    static func noPurchase(_ token: String) -> SimulatorRequestError {
        SimulatorRequestError(description: "no purchase \(token)", status: .notFound)
    }
}
