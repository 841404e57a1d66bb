import Foundation
import Postgres

/// What support staff start from (SPEC section 13): an Apple order ID from the invoice e-mail, a
/// transaction id, the app's account id, or an app account token.
public struct DeskQuery: Sendable, Codable, Equatable {
    /// Which of the four a query is.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case order
        case transaction
        case user
        case token
    }

    /// What the value is.
    public var kind: Kind
    /// The order ID, transaction id, user id or token, as typed (trimmed).
    public var value: String

    /// The longest order ID, transaction id or token accepted: all are far shorter.
    public static let maximumLength = 256
    /// The longest account id accepted: the app's ledger and uploads may hold ids of kilobytes,
    /// and the desk finds what a run reported about them.
    public static let maximumUserLength = 16_384

    /// A query; `DeskError.invalidQuery` when the value is empty, too long, or not what `kind` says.
    public init(_ kind: Kind, _ value: String) throws(DeskError) {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        let limit = kind == .user ? Self.maximumUserLength : Self.maximumLength
        guard !trimmed.isEmpty, trimmed.utf8.count <= limit,
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw .invalidQuery("a \(kind.rawValue) must be 1 to \(limit) bytes without control characters")
        }
        switch kind {
        case .token:
            guard let token = UUID(uuidString: trimmed) else {
                throw .invalidQuery("\(trimmed) is not an app account token (a UUID)")
            }
            self.value = token.uuidString.lowercased()
        case .transaction:
            guard trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw .invalidQuery("\(trimmed) is not a transaction id (digits only)")
            }
            self.value = trimmed
        case .order:
            guard trimmed.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw .invalidQuery("\(trimmed) is not an Apple order ID (letters and digits, like MK5TTY6V5X)")
            }
            self.value = trimmed.uppercased()
        case .user:
            self.value = trimmed
        }
        self.kind = kind
    }

    /// What one search field holds, recognised from its shape: a UUID is a token, digits are a
    /// transaction id, ten to twelve capitals and digits with a letter (`MK5TTY6V5X`) an order ID,
    /// anything else an account id. The field holds at most ``maximumLength`` bytes (the web's
    /// search box); a longer account id is looked up by kind (`reconcile lookup --user`).
    public static func recognising(_ text: String) throws(DeskError) -> DeskQuery {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count <= maximumLength else {
            throw .invalidQuery("a search must be 1 to \(maximumLength) bytes without control characters")
        }
        if UUID(uuidString: trimmed) != nil { return try DeskQuery(.token, trimmed) }
        if !trimmed.isEmpty, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) {
            return try DeskQuery(.transaction, trimmed)
        }
        if (10...12).contains(trimmed.count),
            trimmed.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }),
            trimmed.contains(where: \.isLetter)
        {
            return try DeskQuery(.order, trimmed)
        }
        return try DeskQuery(.user, trimmed)
    }
}

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
        @ExplicitNull public var environment: String?
        @ExplicitNull public var revocationDate: Date?
        @ExplicitNull public var revocationReason: Int?
        /// `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE` once the white table keeps it.
        @ExplicitNull public var revocationType: String?
        @ExplicitNull public var revocationPercentage: Int?
        /// Apple's price (or the catalogue's) in milliunits, and its currency.
        @ExplicitNull public var priceMilli: Int64?
        @ExplicitNull public var currency: String?
        /// `verify_receipt`, `local_receipt`, `jws`, `server_api`, `notification`, `order_lookup`.
        public var sources: [String]
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
            case verdict
        }
    }

    /// Who bought it and how that was decided (SPEC section 5).
    public struct Buyer: Sendable, Codable, Equatable {
        @ExplicitNull public var userID: String?
        /// `app_account_token`, `application_username`, `uploader`, or nil (unknown).
        @ExplicitNull public var basis: String?

        public init(userID: String?, basis: String?) {
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
        case query, order, transactions
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

extension CustomerPicture.Transaction {
    /// A column's value as one of the closed sets the queue stores (a kind, a status, a
    /// resolution); a value this build does not know is a decoding error that names it.
    static func typed<T: RawRepresentable<String>>(_ row: Row, _ column: String) throws -> T {
        try typed(try row.decode(String.self, column), column)
    }

    static func typed<T: RawRepresentable<String>>(_ raw: String, _ column: String) throws -> T {
        guard let value = T(rawValue: raw) else {
            throw PostgresError(kind: .decoding, message: "review item has unknown \(column) \(raw)")
        }
        return value
    }

    /// The transactions of `sql/diff/90_picture.sql`, in order, without their details.
    static func assemble(transactions: [Row]) throws -> [Self] {
        try transactions.map { row in
            let id = try row.decode(String.self, "transaction_id")
            let sources = try row.decode(String.self, "sources")
            return Self(
                transactionID: id, originalTransactionID: try row["original_transaction_id"],
                productID: try row["product_id"], productType: try row["product_type"],
                bundleID: try row["bundle_id"], purchaseDate: try row["purchase_date"],
                quantity: try row["quantity"], environment: try row["environment"],
                revocationDate: try row["revocation_date"], revocationReason: try row["revocation_reason"],
                revocationType: try row["revocation_type"],
                revocationPercentage: try row["revocation_percentage"],
                priceMilli: try row["price_milli"], currency: try row["currency"],
                sources: sources.isEmpty ? [] : sources.split(separator: ",").map(String.init),
                buyer: CustomerPicture.Buyer(userID: try row["buyer"], basis: try row["basis"]),
                deliveries: [], uploads: [], reviewItems: [],
                verdict: try row["verdict"])
        }
    }

    /// `transactions` with the ledger rows, uploads and review items of
    /// `sql/diff/91_picture_details.sql`'s three results (each keyed by transaction id; a
    /// transaction whose details were not read has none).
    static func attaching(
        deliveries: [Row], uploads: [Row], reviewItems: [Row], to transactions: [Self]
    ) throws -> [Self] {
        var deliveriesByID: [String: [CustomerPicture.Delivery]] = [:]
        for row in deliveries {
            deliveriesByID[try row.decode(String.self, "transaction_id"), default: []].append(
                CustomerPicture.Delivery(
                    id: try row["id"], userID: try row["user_id"], productID: try row["product_id"],
                    quantity: try row["quantity"], deliveredAt: try row["delivered_at"],
                    revokedAt: try row["revoked_at"]))
        }
        var uploadsByID: [String: [CustomerPicture.Upload]] = [:]
        for row in uploads {
            uploadsByID[try row.decode(String.self, "transaction_id"), default: []].append(
                CustomerPicture.Upload(
                    id: try row["id"], userID: try row["user_id"], kind: try row["kind"],
                    uploadedAt: try row["uploaded_at"],
                    applicationUsername: try row["application_username"],
                    appAccountToken: try row["app_account_token"],
                    claimedTransactionID: try row["claimed_transaction_id"],
                    verification: try row["verification"], appleStatus: try row["apple_status"],
                    error: try row["error"]))
        }
        var itemsByID: [String: [CustomerPicture.ReviewItemSummary]] = [:]
        for row in reviewItems {
            itemsByID[try row.decode(String.self, "transaction_id"), default: []].append(
                CustomerPicture.ReviewItemSummary(
                    id: try row["id"], kind: try Self.typed(row, "kind"), status: try Self.typed(row, "status"),
                    severity: Severity(rawValue: try row["severity"]), suggestedAction: try row["suggested_action"],
                    resolution: try row["resolution", as: String?.self].map { try Self.typed($0, "resolution") },
                    assignee: try row["assignee"]))
        }
        return transactions.map { transaction in
            var transaction = transaction
            let id = transaction.transactionID
            transaction.deliveries = deliveriesByID[id] ?? []
            transaction.uploads = uploadsByID[id] ?? []
            transaction.reviewItems = itemsByID[id] ?? []
            return transaction
        }
    }
}

/// Why a lookup could not be answered.
public enum DeskError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The query is malformed (exit 64).
    case invalidQuery(String)
    /// An order ID needs Look Up Order ID, which needs Server API credentials (exit 64).
    case orderNeedsServerAPI
    /// Apple could not answer now, or answered with signatures that do not verify (exit 1).
    case appleUnanswered(String)

    public var description: String {
        switch self {
        case .invalidQuery(let reason): "invalid lookup: \(reason)"
        case .orderNeedsServerAPI:
            "an order ID can only be looked up with Apple's Look Up Order ID, which needs App Store Server API "
                + "credentials (APPSTORE_KEY_ID, APPSTORE_ISSUER_ID, APPSTORE_PRIVATE_KEY_FILE); look the customer up "
                + "by --transaction, --user or --token instead"
        case .appleUnanswered(let reason): "Apple did not answer the lookup: \(reason); try again shortly"
        }
    }
}
