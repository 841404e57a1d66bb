import Foundation
import Postgres

/// One void Google reported (the voided-purchases list or a voidedPurchaseNotification, SPEC
/// section 18): the order, when Google voided it, and for a quantity-based partial refund how many
/// units it took.
public struct PlayVoid: Sendable, Equatable {
    /// The voided order's id (the renewal's own for a subscription renewal), or the purchase token
    /// when Google gave the purchase no order id.
    public var orderID: String
    public var purchaseToken: String
    public var packageName: String
    /// When Google voided it (`voidedTimeMillis`).
    public var voidedAt: Date
    /// When it was bought (`purchaseTimeMillis`).
    public var purchasedAt: Date?
    /// `voidedQuantity`: the units of a quantity-based partial refund; nil for a full void.
    public var voidedQuantity: Int?
    /// `voidedReason` (8: Google refunded a purchase nobody acknowledged).
    public var voidedReason: Int?
    /// `voidedSource` (0 user, 1 developer, 2 Google).
    public var voidedSource: Int?

    public init(
        orderID: String, purchaseToken: String, packageName: String, voidedAt: Date, purchasedAt: Date? = nil,
        voidedQuantity: Int? = nil, voidedReason: Int? = nil, voidedSource: Int? = nil
    ) {
        self.orderID = orderID
        self.purchaseToken = purchaseToken
        self.packageName = packageName
        self.voidedAt = voidedAt
        self.purchasedAt = purchasedAt
        self.voidedQuantity = voidedQuantity
        self.voidedReason = voidedReason
        self.voidedSource = voidedSource
    }

    /// Google refunded it because nobody acknowledged the purchase within three days.
    public var isUnacknowledgedRefund: Bool { voidedReason == 8 }
}

/// Google Play's voids in `reconcile.play_voided_purchases`: each kept once, then applied to the
/// white table's Play rows (`sql/play/apply_voids.sql`), so that a void is judged as a revocation
/// whichever of the list, a notification or the purchase itself arrives first.
enum PlayVoids {
    /// Keeps the voids not seen before and applies them; returns the orders whose white row they
    /// changed. Call inside the caller's transaction.
    @discardableResult
    static func record(_ voids: [PlayVoid], runID: Int64, on connection: Connection) throws -> [String] {
        try recordCounting(voids, runID: runID, on: connection).changed
    }

    /// What ``recordCounting(_:runID:on:)`` kept.
    struct Recorded: Sendable, Equatable {
        /// Voids not seen before.
        var fresh = 0
        /// Of those, voids for want of an acknowledgement (`voidedReason` 8).
        var unacknowledged = 0
        /// The orders whose white row the fresh voids changed.
        var changed: [String] = []

        mutating func add(_ other: Recorded) {
            fresh += other.fresh
            unacknowledged += other.unacknowledged
            changed += other.changed
        }
    }

    /// ``record(_:runID:on:)``, saying how many voids were new and how many of those Google made
    /// for want of an acknowledgement. Call inside the caller's transaction.
    static func recordCounting(_ voids: [PlayVoid], runID: Int64, on connection: Connection) throws -> Recorded {
        guard !voids.isEmpty else { return Recorded() }
        try connection.execute(SQL.stage)
        try connection.copyIn(SQL.copy) { writer in
            for void in voids {
                try writer.append([
                    void.orderID, void.voidedAt, void.purchaseToken, void.packageName, void.purchasedAt,
                    void.voidedQuantity, void.voidedReason, void.voidedSource,
                ])
            }
        }
        let fresh = try connection.query(SQL.record, ["run_id": runID]).map {
            (order: try $0.decode(String.self, at: 0), reason: try $0.decode(Int?.self, at: 1))
        }
        let changed = try apply(orderIDs: Array(Set(fresh.map(\.order))), runID: runID, on: connection)
        return Recorded(fresh: fresh.count, unacknowledged: fresh.filter { $0.reason == 8 }.count, changed: changed)
    }

    /// Applies the recorded voids of `orderIDs` (every order with a void when nil) to their white
    /// rows; returns the orders changed.
    @discardableResult
    static func apply(orderIDs: [String]?, runID: Int64, on connection: Connection) throws -> [String] {
        if let orderIDs, orderIDs.isEmpty { return [] }
        return try connection.query(SQL.apply, ["order_ids": orderIDs, "run_id": runID])
            .map { try $0.decode(String.self, at: 0) }
    }

    /// Voids for want of an acknowledgement (`voidedReason` 8) the job learnt of after run `after`
    /// (the last finished run), whoever read them: the nightly report's `voided_unacknowledged`.
    static func unacknowledgedSince(_ after: Int64, on connection: Connection) throws -> Int {
        try connection.query(SQL.unacknowledgedSince, ["after": after])[0].decode(Int.self, at: 0)
    }

    /// The statements, in `sql/play/`.
    enum SQL {
        static let unacknowledgedSince: SQLFile = "play/unacknowledged_since.sql"
        static let stage: SQLFile = "play/stage_voids.sql"
        static let copy: SQLFile = "play/copy_voids.sql"
        static let record: SQLFile = "play/record_voids.sql"
        static let apply: SQLFile = "play/apply_voids.sql"
    }
}
