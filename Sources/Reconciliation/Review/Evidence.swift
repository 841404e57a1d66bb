import AppStore
import Foundation

/// What a review item's `evidence` holds (written by `sql/diff/70_evidence.sql`): the one Swift
/// shape of that JSON, for pages and commands that show it. Keys PostgreSQL wrote that are not
/// listed here are ignored; timestamps stay the text PostgreSQL wrote (`2026-01-02T03:04:05+00:00`).
public struct Evidence: Codable, Sendable, Equatable {
    /// Apple's transaction as the job stored it (`reconcile.apple_transactions`); nil for a
    /// transaction Apple does not know.
    public var appleTransaction: AppleTransaction?
    /// The ledger rows of the transaction and of its key (a non-consumable's family), by id.
    public var deliveries: [Delivery]
    /// The uploads that carried the transaction or said they reported it, by id.
    public var uploads: [Upload]
    /// How the buyer was resolved; nil when the transaction is not in Apple's data.
    public var buyer: Buyer?
    /// refunded_delivery only: how many units Apple's revocation took back (all of them unless a
    /// prorated refund), and the revocation as Apple stated it; nil for the other kinds.
    public var refundedQuantity: Int?
    /// `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`; nil when Apple did not say.
    public var revocationType: RevocationType?
    /// Milliunits of the whole quantity (100000 = all), for `REFUND_PRORATED`.
    public var revocationPercentage: Int?

    public struct AppleTransaction: Codable, Sendable, Equatable {
        public var transactionID: String
        public var originalTransactionID: String?
        public var productID: String
        public var productType: ProductType?
        public var bundleID: String?
        public var environment: AppStoreEnvironment?
        public var quantity: Int?
        public var purchaseDate: String?
        public var revocationDate: String?
        public var revocationReason: Int?
        public var revocationType: RevocationType?
        public var revocationPercentage: Int?
        public var ownershipType: OwnershipType?
        public var appAccountToken: String?
        public var priceMilli: Int64?
        public var currency: String?
        public var storefront: String?
        public var source: TransactionSource?
        /// One per Apple ID and app: two under one account are two Apple IDs.
        public var appTransactionID: String?

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id", originalTransactionID = "original_transaction_id"
            case productID = "product_id", productType = "product_type", bundleID = "bundle_id", environment
            case quantity, purchaseDate = "purchase_date", revocationDate = "revocation_date"
            case revocationReason = "revocation_reason", revocationType = "revocation_type"
            case revocationPercentage = "revocation_percentage", ownershipType = "ownership_type"
            case appAccountToken = "app_account_token", priceMilli = "price_milli", currency, storefront, source
            case appTransactionID = "app_transaction_id"
        }
    }

    /// One row of the delivery ledger (the operator's relation may hold more columns).
    public struct Delivery: Codable, Sendable, Equatable {
        public var id: Int64?
        public var transactionID: String?
        public var userID: String?
        public var productID: String?
        public var quantity: Int?
        public var deliveredAt: String?
        public var revokedAt: String?

        enum CodingKeys: String, CodingKey {
            case id, transactionID = "transaction_id", userID = "user_id", productID = "product_id", quantity
            case deliveredAt = "delivered_at", revokedAt = "revoked_at"
        }
    }

    /// One upload, with its verification.
    public struct Upload: Codable, Sendable, Equatable {
        public var id: Int64
        public var userID: String
        public var kind: UploadKind?
        public var uploadedAt: String?
        /// As the app uploaded it (any JSON).
        public var device: JSONValue?
        public var applicationUsername: String?
        public var appAccountToken: String?
        public var claimedTransactionID: String?
        public var verification: VerificationState?
        public var appleStatus: Int?
        public var error: String?
        public var environment: AppStoreEnvironment?
        public var bundleID: String?

        enum CodingKeys: String, CodingKey {
            case id, userID = "user_id", kind, uploadedAt = "uploaded_at", device
            case applicationUsername = "application_username", appAccountToken = "app_account_token"
            case claimedTransactionID = "claimed_transaction_id", verification, appleStatus = "apple_status"
            case error, environment, bundleID = "bundle_id"
        }
    }

    /// Who bought the transaction, and how the diff knows.
    public struct Buyer: Codable, Sendable, Equatable {
        /// nil when several accounts uploaded it and nothing binds it.
        public var userID: String?
        /// `app_account_token`, `application_username` or `uploader`; nil when unknown.
        public var basis: BuyerBasis?
        /// How many accounts uploaded it.
        public var uploaders: Int

        enum CodingKeys: String, CodingKey {
            case userID = "user_id", basis, uploaders
        }
    }

    enum CodingKeys: String, CodingKey {
        case appleTransaction = "apple_transaction", deliveries, uploads, buyer
        case refundedQuantity = "refunded_quantity", revocationType = "revocation_type"
        case revocationPercentage = "revocation_percentage"
    }

    /// Reads the JSON text of a review item's or report finding's evidence.
    public init(json: String) throws {
        self = try JSONDecoder().decode(Evidence.self, from: Data(json.utf8))
    }
}

/// Any JSON value, for the parts of the evidence the app or the operator shapes (an upload's
/// `device`): kept whole rather than forced into a type.
public enum JSONValue: Codable, Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The value as one line of text: a string as it is, a whole number without a fraction, an
    /// object's keys sorted ("model iPhone14,5, os_version 17.2"); nil for null.
    public var text: String? {
        switch self {
        case .string(let value): value
        case .number(let value):
            value.rounded() == value && abs(value) < 9e15 ? String(Int64(value)) : String(value)
        case .bool(let value): String(value)
        case .array(let value): value.map { $0.text ?? "null" }.joined(separator: ", ")
        case .object(let value): value.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.text ?? "null")" }
            .joined(separator: ", ")
        case .null: nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}
