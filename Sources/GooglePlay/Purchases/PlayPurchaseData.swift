import Foundation

/// The fields of a Play purchase's `purchaseData` (`Purchase.getOriginalJson()`, Play Billing):
/// what the client holds about a purchase, signed by Google with the app's licence key.
///
/// Unknown fields are ignored. The signature proves Google issued the purchase, not its state
/// today: a refund or a void is only known from the Developer API.
public struct PlayPurchaseData: Hashable, Sendable {
    /// `purchaseState` as the JSON gives it. The JSON's numbers are not the Billing Library's
    /// `Purchase.PurchaseState` constants (which map JSON 4 to `PENDING` = 2): only the JSON is signed.
    public struct PurchaseState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Paid.
        public static let purchased = PurchaseState(rawValue: 0)
        /// Awaiting payment (cash, bank transfer): never judged until it is paid.
        public static let pending = PurchaseState(rawValue: 4)

        public var description: String {
            switch self {
            case .purchased: "purchased"
            case .pending: "pending"
            default: "state \(rawValue)"
            }
        }
    }

    /// The signed text these fields were read from, unchanged.
    public let json: String
    /// `orderId`: `GPA.3312-5678-9012-34567`, a renewal's with `..N`; absent for licence testers.
    public let orderID: String?
    public let packageName: String
    /// `productId`, or the first of `productIds` (newer Billing Library versions write the array).
    public let productID: String
    /// Every product of the purchase (`productIds`, else `[productId]`).
    public let productIDs: [String]
    /// `purchaseTime`, epoch milliseconds.
    public let purchaseTimeMillis: Int64
    public let purchaseState: PurchaseState
    public let purchaseToken: String
    /// `quantity`; 1 when absent (Google writes it only for multi-quantity purchases).
    public let quantity: Int
    public let acknowledged: Bool?
    /// Subscriptions only.
    public let autoRenewing: Bool?
    /// The buyer binding the app set with `setObfuscatedAccountId` (SPEC section 18).
    public let obfuscatedAccountID: String?
    public let obfuscatedProfileID: String?
    public let developerPayload: String?
    /// `purchaseType`: 0 test (licence tester), 1 promo (code); absent for a real purchase.
    public let purchaseType: Int?

    /// Reads `purchaseData`'s text.
    public init(json: String) throws(PlayUploadFailure) {
        let value: PlayJSON.Value
        do {
            value = try PlayJSON.parse(json.utf8)
        } catch {
            throw PlayPurchaseUpload.failure(error, notJSON: .purchaseDataNotObject)
        }
        guard case .object(let fields) = value else { throw .purchaseDataNotObject }

        func string(_ name: String) throws(PlayUploadFailure) -> String? {
            guard let value = fields[name], value != .null else { return nil }
            guard let text = value.string else { throw .purchaseDataInvalidField(name) }
            return text
        }
        func required(_ name: String) throws(PlayUploadFailure) -> String {
            guard let text = try string(name), !text.isEmpty else { throw .purchaseDataMissingField(name) }
            return text
        }
        func integer(_ name: String) throws(PlayUploadFailure) -> Int64? {
            guard let value = fields[name], value != .null else { return nil }
            guard case .number = value, let number = value.int64 else { throw .purchaseDataInvalidField(name) }
            return number
        }
        func bool(_ name: String) throws(PlayUploadFailure) -> Bool? {
            guard let value = fields[name], value != .null else { return nil }
            guard let flag = value.bool else { throw .purchaseDataInvalidField(name) }
            return flag
        }

        self.json = json
        orderID = try string("orderId").flatMap { $0.isEmpty ? nil : $0 }
        packageName = try required("packageName")
        if case .array(let elements) = fields["productIds"] {
            let ids = elements.compactMap(\.string)
            guard ids.count == elements.count else { throw .purchaseDataInvalidField("productIds") }
            productIDs = ids
        } else if fields["productIds"] != nil, fields["productIds"] != .null {
            throw .purchaseDataInvalidField("productIds")
        } else {
            productIDs = try string("productId").map { [$0] } ?? []
        }
        guard let first = productIDs.first, !first.isEmpty else { throw .purchaseDataMissingField("productId") }
        productID = first
        guard let time = try integer("purchaseTime") else { throw .purchaseDataMissingField("purchaseTime") }
        purchaseTimeMillis = time
        purchaseToken = try required("purchaseToken")
        purchaseState = PurchaseState(rawValue: Int(clamping: try integer("purchaseState") ?? 0))
        guard let quantity = Int(exactly: try integer("quantity") ?? 1), quantity > 0 else {
            throw .purchaseDataInvalidField("quantity")
        }
        self.quantity = quantity
        acknowledged = try bool("acknowledged")
        autoRenewing = try bool("autoRenewing")
        obfuscatedAccountID = try string("obfuscatedAccountId")
        obfuscatedProfileID = try string("obfuscatedProfileId")
        developerPayload = try string("developerPayload")
        purchaseType = try integer("purchaseType").map { Int(clamping: $0) }
    }

    /// `purchaseTime` as a date.
    public var purchaseTime: Date { Date(timeIntervalSince1970: Double(purchaseTimeMillis) / 1000) }

    /// The ledger's key for this purchase (SPEC section 18): the order id, or the purchase token
    /// when Google gives the purchase none (licence testers).
    public var transactionID: String { orderID ?? purchaseToken }

    /// The first order of a subscription: the order id without a renewal's `..N` suffix
    /// (`GPA.1234-5678-9012-34567..2` renews `GPA.1234-5678-9012-34567`); the token without an order id.
    public var originalOrderID: String {
        guard let orderID else { return purchaseToken }
        return Self.originalOrderID(of: orderID)
    }

    /// `orderID` without a trailing `..N`.
    public static func originalOrderID(of orderID: String) -> String {
        guard let range = orderID.range(of: "..", options: .backwards),
            !orderID[range.upperBound...].isEmpty, orderID[range.upperBound...].allSatisfy(\.isASCIIDigit)
        else { return orderID }
        return String(orderID[..<range.lowerBound])
    }

    /// A licence tester's purchase (`purchaseType` 0): no money moved.
    public var isTest: Bool { purchaseType == 0 }
    /// Redeemed with a promo code (`purchaseType` 1).
    public var isPromo: Bool { purchaseType == 1 }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
