import AppStore
import Foundation
import Postgres

/// A customer's picture, as `reconcile lookup --json` prints it and the web's customer page shows
/// it: every Apple transaction involved with its sources, buyer, ledger rows, uploads, review
/// items and the verdict of the nightly run's rules.
public struct CustomerPicture: Sendable, Codable, Equatable {
    /// What was asked.
    public var query: DeskQuery
    /// What Look Up Order ID said; nil for lookups that are not by order.
    @ExplicitNull public var order: Order?
    /// The transactions, oldest purchase first; ledger-only transactions last.
    public var transactions: [Transaction]
    /// Which sources the lookup asked, in the order it first asked them (SPEC section 18: the
    /// desk says which; Google Play has no purchase history by account to ask).
    public var asked: [AskedSource] = []

    /// A source the desk can ask.
    public enum AskedSource: String, Sendable, Codable, Equatable, CaseIterable {
        /// What the job stores: the white table, the ledger, the uploads, the review items.
        case stored
        /// Apple's Look Up Order ID.
        case lookUpOrderID = "look_up_order_id"
        /// Apple's Get Transaction Info.
        case transactionInfo = "get_transaction_info"
        /// Apple's Get Transaction History.
        case transactionHistory = "get_transaction_history"
        /// Google's Orders API (`orders.get`).
        case ordersGet = "orders_get"
        /// Google's purchase state (`purchases.productsv2` or `purchases.subscriptionsv2`).
        case purchaseState = "purchase_state"
    }

    /// Sources that cannot answer this lookup.
    public var unavailable: [UnavailableSource] = []

    /// A source no store offers for the lookup.
    public enum UnavailableSource: String, Sendable, Codable, Equatable, CaseIterable {
        /// Google Play has no purchase history by account: a lookup by account or token shows the
        /// Play purchases uploads, the ledger and Google's answers about single orders brought.
        case playHistory = "google_play_history"
    }

    public init(
        query: DeskQuery, order: Order?, transactions: [Transaction], asked: [AskedSource] = [],
        unavailable: [UnavailableSource] = []
    ) {
        self.query = query
        self.order = order
        self.transactions = transactions
        self.asked = asked
        self.unavailable = unavailable
    }

    /// Apple's answer about an order ID.
    public struct Order: Sendable, Codable, Equatable {
        /// The order ID asked about.
        public var orderID: String
        /// What Apple said of it.
        public var status: Status

        /// Apple's answer: the order exists (`valid`), it does not (`invalid`), or it was not asked.
        public enum Status: String, Sendable, Codable {
            case valid
            case invalid
            case notAsked = "not_asked"
        }

        public init(orderID: String, status: Status) {
            self.orderID = orderID
            self.status = status
        }

        enum CodingKeys: String, CodingKey {
            case orderID = "order_id"
            case status
        }
    }

    /// One transaction of the picture.
    public struct Transaction: Sendable, Codable, Equatable {
        public var transactionID: String
        /// Nil for a transaction only the ledger names.
        @ExplicitNull public var originalTransactionID: String?
        @ExplicitNull public var productID: String?
        @ExplicitNull public var productType: String?
        @ExplicitNull public var bundleID: String?
        @ExplicitNull public var purchaseDate: Date?
        @ExplicitNull public var quantity: Int?
        /// The store's environment (`Production`, `Sandbox`), as the white table keeps it.
        @ExplicitNull public var environment: AppStoreEnvironment?
        @ExplicitNull public var revocationDate: Date?
        @ExplicitNull public var revocationReason: Int?
        /// `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE` once the white table keeps it.
        @ExplicitNull public var revocationType: String?
        @ExplicitNull public var revocationPercentage: Int?
        /// Apple's price (or the catalogue's) in milliunits, and its currency.
        @ExplicitNull public var priceMilli: Int64?
        @ExplicitNull public var currency: String?
        /// Which store the transaction is of (`app_store`, `google_play`).
        public var store: Store = .appStore
        /// `verify_receipt`, `local_receipt`, `jws`, `server_api`, `notification`, `order_lookup`,
        /// Play's `play_purchase`, `play_api`, …
        public var sources: [TransactionSource]
        public var buyer: Buyer
        public var deliveries: [Delivery]
        public var uploads: [Upload]
        public var reviewItems: [ReviewItemSummary]
        public var verdict: TransactionVerdict

        /// The finding the verdict names, if it is one.
        public var finding: FindingKind? { verdict.finding }

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case productID = "product_id"
            case productType = "product_type"
            case bundleID = "bundle_id"
            case purchaseDate = "purchase_date"
            case quantity, environment
            case revocationDate = "revocation_date"
            case revocationReason = "revocation_reason"
            case revocationType = "revocation_type"
            case revocationPercentage = "revocation_percentage"
            case priceMilli = "price_milli"
            case currency, sources, buyer, deliveries, uploads
            case reviewItems = "review_items"
            case verdict, store
        }
    }

    /// Who bought it and how that was decided (SPEC section 5).
    public struct Buyer: Sendable, Codable, Equatable {
        @ExplicitNull public var userID: String?
        /// `app_account_token`, `application_username`, `uploader`, or nil (unknown).
        @ExplicitNull public var basis: BuyerBasis?

        public init(userID: String?, basis: BuyerBasis?) {
            self.userID = userID
            self.basis = basis
        }

        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
            case basis
        }
    }

    /// A ledger row for the transaction.
    public struct Delivery: Sendable, Codable, Equatable {
        public var id: Int64
        public var userID: String
        public var productID: String
        public var quantity: Int
        public var deliveredAt: Date
        @ExplicitNull public var revokedAt: Date?

        enum CodingKeys: String, CodingKey {
            case id
            case userID = "user_id"
            case productID = "product_id"
            case quantity
            case deliveredAt = "delivered_at"
            case revokedAt = "revoked_at"
        }
    }

    /// An upload that carried the transaction or said it reported it.
    public struct Upload: Sendable, Codable, Equatable {
        public var id: Int64
        public var userID: String
        public var kind: UploadKind
        public var uploadedAt: Date
        @ExplicitNull public var applicationUsername: String?
        @ExplicitNull public var appAccountToken: String?
        @ExplicitNull public var claimedTransactionID: String?
        /// Where its verification stands; nil before it is queued.
        @ExplicitNull public var verification: VerificationState?
        @ExplicitNull public var appleStatus: Int?
        @ExplicitNull public var error: String?

        enum CodingKeys: String, CodingKey {
            case id
            case userID = "user_id"
            case kind
            case uploadedAt = "uploaded_at"
            case applicationUsername = "application_username"
            case appAccountToken = "app_account_token"
            case claimedTransactionID = "claimed_transaction_id"
            case verification
            case appleStatus = "apple_status"
            case error
        }
    }

    /// A review item about the transaction, open or decided.
    public struct ReviewItemSummary: Sendable, Codable, Equatable {
        public var id: Int64
        public var kind: FindingKind
        public var status: ReviewStatus
        public var severity: Severity
        public var suggestedAction: SuggestedAction
        @ExplicitNull public var resolution: Resolution?
        @ExplicitNull public var assignee: String?

        enum CodingKeys: String, CodingKey {
            case id, kind, status, severity
            case suggestedAction = "suggested_action"
            case resolution, assignee
        }
    }

    enum CodingKeys: String, CodingKey {
        case query, order, transactions, asked, unavailable
    }

    /// Nothing found, or an order Apple calls invalid.
    public var isEmpty: Bool { transactions.isEmpty }

    /// The findings among the verdicts.
    public var findings: [FindingKind] { transactions.compactMap(\.finding) }

    /// The picture as `--json` prints it (timestamps RFC 3339 UTC with milliseconds).
    public func json(pretty: Bool = true) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Self.timestamp.format(date))
        }
        return try encoder.encode(self)
    }

    /// Reads the JSON `json()` writes (and the desk's SQL builds).
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? timestamp.parse(text) { return date }
            if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 time: \(text)")
        }
        return decoder
    }

    static let timestamp = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(secondsFromGMT: 0)!)
}
