import Foundation
import Postgres

/// An action the app must carry out, as written to `reconcile.action_outbox`.
public enum OutboxAction: String, Sendable, CaseIterable, Codable, PostgresNonNullDecodable {
    case grant
    case revoke
    case move
}

/// One row of `reconcile.action_outbox`: a decision the app's fulfilment system carries out.
public struct OutboxEntry: Sendable, Equatable, Encodable {
    /// The row id.
    public var id: Int64
    /// The item decided.
    public var reviewItemID: Int64
    /// The event that recorded the decision.
    public var reviewEventID: Int64
    /// What to do.
    public var action: OutboxAction
    /// Which store's purchase it is (SPEC section 18): the decided item's.
    public var store: Store
    /// The store's transaction id (Apple's, or Google Play's order id).
    @ExplicitNull public var transactionID: String?
    /// The product (Apple's, when Apple knows the transaction).
    @ExplicitNull public var productID: String?
    /// How many units.
    @ExplicitNull public var quantity: Int?
    /// The account to take the goods from (revoke, move).
    @ExplicitNull public var fromUserID: String?
    /// The account to give the goods to (grant, move).
    @ExplicitNull public var toUserID: String?
    /// Who decided.
    public var decidedBy: String
    /// The note left with the decision.
    @ExplicitNull public var note: String?
    /// When it was created.
    public var createdAt: Date
    /// When the webhook delivered it (a 2xx); nil before, or without a webhook.
    @ExplicitNull public var deliveredAt: Date?
    /// When the app carried it out; nil while pending.
    @ExplicitNull public var consumedAt: Date?
    /// Who acked it (`reconcile outbox ack --by`).
    @ExplicitNull public var consumedBy: String?

    /// SPEC section 13's JSON field names (`outbox list --json`, the webhook's body).
    enum CodingKeys: String, CodingKey {
        case id
        case reviewItemID = "review_item_id"
        case action
        case store
        case transactionID = "transaction_id"
        case productID = "product_id"
        case quantity
        case fromUserID = "from_user_id"
        case toUserID = "to_user_id"
        case decidedBy = "decided_by"
        case note
        case createdAt = "created_at"
        case deliveredAt = "delivered_at"
        case consumedAt = "consumed_at"
        case consumedBy = "consumed_by"
    }

    init(row: Row) throws {
        id = try row["id"]
        reviewItemID = try row["review_item_id"]
        reviewEventID = try row["review_event_id"]
        action = try row["action"]
        store = try row["store"]
        transactionID = try row["transaction_id"]
        productID = try row["product_id"]
        quantity = try row["quantity"]
        fromUserID = try row["from_user_id"]
        toUserID = try row["to_user_id"]
        decidedBy = try row["decided_by"]
        note = try row["note"]
        createdAt = try row["created_at"]
        deliveredAt = try row["delivered_at"]
        consumedAt = try row["consumed_at"]
        consumedBy = try row["consumed_by"]
    }
}
