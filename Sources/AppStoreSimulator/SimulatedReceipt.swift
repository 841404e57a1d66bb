import AppStore
import Foundation

/// A receipt the simulator issues: what `POST /sim/receipts` and `appstore-sim receipt` take, and
/// what the simulator reads back out of a PKCS#7 receipt when answering verifyReceipt.
public struct SimulatedReceipt: Sendable, Hashable, Codable {
    /// The environment a receipt belongs to. Only these two reach verifyReceipt.
    public enum Environment: String, Sendable, Hashable, Codable {
        /// Real purchases.
        case production = "Production"
        /// Sandbox purchases.
        case sandbox = "Sandbox"

        /// Accepts `Production`/`production`, `Sandbox`/`sandbox`/`ProductionSandbox`.
        public init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let value = Environment(lenient: text) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "environment must be Production or Sandbox"))
            }
            self = value
        }

        /// Case-insensitive; `ProductionSandbox` (the receipt's own name for it) is the sandbox.
        public init?(lenient text: String) {
            switch text.lowercased() {
            case "production": self = .production
            case "sandbox", "productionsandbox": self = .sandbox
            default: return nil
            }
        }

        /// The environment as the AppStore module names it.
        public var verified: VerifiedReceipt.Environment { self == .production ? .production : .sandbox }
    }

    /// One in-app purchase of the receipt (attribute 17).
    public struct Purchase: Sendable, Hashable, Codable {
        /// 1702.
        public var productID: String
        /// 1703; the simulator makes one up when left out.
        public var transactionID: String?
        /// 1705; the transaction id when left out.
        public var originalTransactionID: String?
        /// 1704.
        public var purchaseDate: Date
        /// 1706; the purchase date when left out.
        public var originalPurchaseDate: Date?
        /// 1701; 1 when left out.
        public var quantity: Int?
        /// 1708, subscriptions only.
        public var expiresDate: Date?
        /// 1712: the purchase was refunded or revoked.
        public var cancellationDate: Date?
        /// 1711, subscriptions.
        public var webOrderLineItemID: Int64?

        /// Creates a purchase.
        public init(
            productID: String, transactionID: String? = nil, originalTransactionID: String? = nil,
            purchaseDate: Date, originalPurchaseDate: Date? = nil, quantity: Int? = nil, expiresDate: Date? = nil,
            cancellationDate: Date? = nil, webOrderLineItemID: Int64? = nil
        ) {
            self.productID = productID
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.purchaseDate = purchaseDate
            self.originalPurchaseDate = originalPurchaseDate
            self.quantity = quantity
            self.expiresDate = expiresDate
            self.cancellationDate = cancellationDate
            self.webOrderLineItemID = webOrderLineItemID
        }

        enum CodingKeys: String, CodingKey {
            case productID = "product_id"
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case purchaseDate = "purchase_date"
            case originalPurchaseDate = "original_purchase_date"
            case quantity
            case expiresDate = "expires_date"
            case cancellationDate = "cancellation_date"
            case webOrderLineItemID = "web_order_line_item_id"
        }

        /// Dates may be RFC 3339 strings or epoch milliseconds; ids may be strings or numbers.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            productID = try c.decode(String.self, forKey: .productID)
            transactionID = try c.flexibleString(.transactionID)
            originalTransactionID = try c.flexibleString(.originalTransactionID)
            guard let purchaseDate = try c.flexibleDate(.purchaseDate) else {
                throw DecodingError.keyNotFound(
                    CodingKeys.purchaseDate, .init(codingPath: c.codingPath, debugDescription: "purchase_date is required"))
            }
            self.purchaseDate = purchaseDate
            originalPurchaseDate = try c.flexibleDate(.originalPurchaseDate)
            quantity = try c.flexibleString(.quantity).flatMap { Int($0) }
            expiresDate = try c.flexibleDate(.expiresDate)
            cancellationDate = try c.flexibleDate(.cancellationDate)
            webOrderLineItemID = try c.flexibleString(.webOrderLineItemID).flatMap { Int64($0) }
        }

        /// Writes dates as RFC 3339 strings.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(productID, forKey: .productID)
            try c.encodeIfPresent(transactionID, forKey: .transactionID)
            try c.encodeIfPresent(originalTransactionID, forKey: .originalTransactionID)
            try c.encode(RFC3339.string(purchaseDate), forKey: .purchaseDate)
            try c.encodeIfPresent(originalPurchaseDate.map(RFC3339.string), forKey: .originalPurchaseDate)
            try c.encodeIfPresent(quantity, forKey: .quantity)
            try c.encodeIfPresent(expiresDate.map(RFC3339.string), forKey: .expiresDate)
            try c.encodeIfPresent(cancellationDate.map(RFC3339.string), forKey: .cancellationDate)
            try c.encodeIfPresent(webOrderLineItemID, forKey: .webOrderLineItemID)
        }
    }

    /// Attribute 2.
    public var bundleID: String
    /// Attribute 0: where the purchases were made.
    public var environment: Environment
    /// Attribute 3; `"1"` when left out.
    public var applicationVersion: String?
    /// Attribute 19; `"1.0"` when left out.
    public var originalApplicationVersion: String?
    /// Attribute 12; now when left out.
    public var creationDate: Date?
    /// Attribute 17, one per purchase.
    public var purchases: [Purchase]

    /// Creates a receipt description.
    public init(
        bundleID: String, environment: Environment, applicationVersion: String? = nil,
        originalApplicationVersion: String? = nil, creationDate: Date? = nil, purchases: [Purchase]
    ) {
        self.bundleID = bundleID
        self.environment = environment
        self.applicationVersion = applicationVersion
        self.originalApplicationVersion = originalApplicationVersion
        self.creationDate = creationDate
        self.purchases = purchases
    }

    enum CodingKeys: String, CodingKey {
        case bundleID = "bundle_id"
        case environment
        case applicationVersion = "application_version"
        case originalApplicationVersion = "original_application_version"
        case creationDate = "creation_date"
        case purchases
    }

    /// Reads the request JSON; dates as RFC 3339 strings or epoch milliseconds.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        bundleID = try c.decode(String.self, forKey: .bundleID)
        environment = try c.decodeIfPresent(Environment.self, forKey: .environment) ?? .production
        applicationVersion = try c.flexibleString(.applicationVersion)
        originalApplicationVersion = try c.flexibleString(.originalApplicationVersion)
        creationDate = try c.flexibleDate(.creationDate)
        purchases = try c.decodeIfPresent([Purchase].self, forKey: .purchases) ?? []
    }

    /// Writes dates as RFC 3339 strings.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(bundleID, forKey: .bundleID)
        try c.encode(environment, forKey: .environment)
        try c.encodeIfPresent(applicationVersion, forKey: .applicationVersion)
        try c.encodeIfPresent(originalApplicationVersion, forKey: .originalApplicationVersion)
        try c.encodeIfPresent(creationDate.map(RFC3339.string), forKey: .creationDate)
        try c.encode(purchases, forKey: .purchases)
    }

    /// The same receipt with every default filled in: transaction ids, versions, dates. Ids are
    /// made from `nextTransactionID` so that they look like Apple's (15–16 digits) and are unique
    /// within one simulator state. Dates are cut to whole seconds, the precision of a receipt's
    /// RFC 3339 attributes, so that what the caller gets back is what the receipt says.
    func completed(now: Date, nextTransactionID: () -> String) -> SimulatedReceipt {
        func seconds(_ date: Date) -> Date { Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)) }
        var receipt = self
        receipt.applicationVersion = applicationVersion ?? "1"
        receipt.originalApplicationVersion = originalApplicationVersion ?? "1.0"
        receipt.creationDate = seconds(creationDate ?? now)
        receipt.purchases = purchases.map { purchase in
            var purchase = purchase
            let transactionID = purchase.transactionID ?? nextTransactionID()
            purchase.transactionID = transactionID
            purchase.originalTransactionID = purchase.originalTransactionID ?? transactionID
            purchase.purchaseDate = seconds(purchase.purchaseDate)
            purchase.originalPurchaseDate = seconds(purchase.originalPurchaseDate ?? purchase.purchaseDate)
            purchase.expiresDate = purchase.expiresDate.map(seconds)
            purchase.cancellationDate = purchase.cancellationDate.map(seconds)
            purchase.quantity = purchase.quantity ?? 1
            return purchase
        }
        return receipt
    }
}

/// RFC 3339 with optional fractional seconds, UTC on output.
enum RFC3339 {
    static func string(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

extension KeyedDecodingContainer {
    /// A string, or a number written as a string.
    fileprivate func flexibleString(_ key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let text = try? decode(String.self, forKey: key) { return text }
        return String(try decode(Int64.self, forKey: key))
    }

    /// An RFC 3339 string, or epoch milliseconds (number or string of digits).
    fileprivate func flexibleDate(_ key: Key) throws -> Date? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let milliseconds = try? decode(Double.self, forKey: key) {
            return Date(timeIntervalSince1970: milliseconds / 1000)
        }
        let text = try decode(String.self, forKey: key)
        if let milliseconds = Double(text) { return Date(timeIntervalSince1970: milliseconds / 1000) }
        guard let date = RFC3339.date(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "not an RFC 3339 date or epoch milliseconds: \(text)")
        }
        return date
    }
}
