import Foundation
import Postgres

/// What the app must do for a resolution, from the item's finding: the action, Apple's or the
/// delivered product, the units, and the accounts it takes from and gives to. A page shows it
/// before a person decides and sends it back with the decision; a decision waiting for
/// approval keeps it, so the approval takes effect exactly so.
public struct ActionDraft: Sendable, Equatable, Codable, CustomStringConvertible {
    public var action: OutboxAction
    public var productID: String?
    public var quantity: Int?
    public var fromUserID: String?
    public var toUserID: String?

    public init(action: OutboxAction, productID: String?, quantity: Int?, fromUserID: String?, toUserID: String?) {
        self.action = action
        self.productID = productID
        self.quantity = quantity
        self.fromUserID = fromUserID
        self.toUserID = toUserID
    }

    enum CodingKeys: String, CodingKey {
        case action
        case productID = "product_id"
        case quantity
        case fromUserID = "from_user_id"
        case toUserID = "to_user_id"
    }

    /// `grant coin42 ×1 to u1`, as ``OutboxEntry/actionDescription`` says an outbox row.
    public var description: String {
        var text = "\(action.rawValue) \(productID ?? "?") ×\(quantity ?? 1)"
        if let fromUserID { text += " from \(fromUserID)" }
        if let toUserID { text += " to \(toUserID)" }
        return text
    }
}

extension ActionDraft {
    /// What `resolution` makes the app do for the item, from its finding as the database holds it
    /// now: granted gives Apple's product to the buyer; revoked takes the delivered goods from the
    /// delivery's account; moved does both; nil for a resolution without an action. Refused when
    /// the evidence could not say who.
    static func drafted(for item: ReviewItem, resolution: Resolution, on connection: Connection) throws -> ActionDraft? {
        guard let action = resolution.action else { return nil }
        let row = try connection.query(ReviewSQL.actionAccounts, ["id": item.id])[0]
        let buyer: String? = try row["buyer"]
        let deliveryUser: String? = try row["delivery_user"]
        let appleProduct: String? = try row["apple_product"]
        switch action {
        case .grant:
            guard let buyer else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution,
                    reason: "the buyer is unknown (several accounts uploaded the transaction and nothing binds it); "
                        + "grant by hand and resolve as no_action with a note")
            }
            // A quantity_mismatch grants only the missing units: none when the app delivered enough.
            let quantity: Int = try row["apple_quantity"] ?? 1
            guard quantity > 0 else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution,
                    reason: "nothing is missing: the delivery holds what Apple sold, or more; "
                        + "revoke the units over it, or resolve as no_action")
            }
            return ActionDraft(
                action: .grant, productID: appleProduct ?? item.productID, quantity: quantity, fromUserID: nil,
                toUserID: buyer)
        case .revoke:
            guard let deliveryUser else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution, reason: "the evidence holds no unrevoked delivery to take back")
            }
            // After a partial refund revoke_quantity holds only the refunded units (SPEC section 14),
            // after a quantity_mismatch only the units over Apple's quantity
            // (sql/diff/findings/*.sql).
            let quantity: Int? = try row["delivery_quantity"]
            try Self.requireUnits(quantity, item: item, resolution: resolution)
            return ActionDraft(
                action: .revoke, productID: try row["delivery_product"] ?? item.productID,
                quantity: quantity, fromUserID: deliveryUser, toUserID: nil)
        case .move:
            guard let deliveryUser, let buyer else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution,
                    reason: deliveryUser == nil
                        ? "the evidence holds no unrevoked delivery to move"
                        : "the buyer is unknown, so there is no account to move the goods to")
            }
            guard deliveryUser != buyer else {
                throw ReviewError.actionNotApplicable(
                    id: item.id, resolution: resolution, reason: "the goods are already with the buyer \(buyer)")
            }
            let quantity: Int? = try row["delivery_quantity"]
            try Self.requireUnits(quantity, item: item, resolution: resolution)
            return ActionDraft(
                action: .move, productID: try row["delivery_product"] ?? item.productID,
                quantity: quantity, fromUserID: deliveryUser, toUserID: buyer)
        }
    }

    /// A revoke or move of no units is refused: a quantity_mismatch whose app delivered less than
    /// Apple sold has nothing over Apple's quantity to take back.
    static func requireUnits(_ quantity: Int?, item: ReviewItem, resolution: Resolution) throws {
        guard quantity == 0 else { return }
        throw ReviewError.actionNotApplicable(
            id: item.id, resolution: resolution,
            reason: "nothing was delivered beyond Apple's quantity; grant the missing units, or resolve as no_action")
    }
}

extension OutboxEntry {
    /// A short description of the row's action (`grant coin42 ×1 to u1`).
    public var actionDescription: String {
        ActionDraft(
            action: action, productID: productID, quantity: quantity, fromUserID: fromUserID, toUserID: toUserID
        ).description
    }

    /// The outbox row of item `id`'s decision, if it wrote one.
    static func ofItem(_ id: Int64, on connection: Connection) throws -> OutboxEntry? {
        try connection.queryFirst(ReviewSQL.outboxOfItem, ["item_id": id]).map(OutboxEntry.init(row:))
    }
}
