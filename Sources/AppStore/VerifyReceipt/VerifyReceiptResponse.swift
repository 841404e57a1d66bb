import Foundation

/// One verifyReceipt answer, read tolerantly: Apple answers HTTP 200 with a JSON `status` even for
/// errors, writes numbers as strings, and has used two layouts (the iOS 7+ one with `in_app`, and
/// the iOS 6 one with `bid`/`bvrs` and the transaction in `receipt`).
public struct VerifyReceiptResponse: Sendable, Hashable {
    /// Apple's `status`.
    public var status: Int
    /// `is_retryable` (some clients see `is-retryable`), meaningful for `21100`–`21199`.
    public var isRetryable: Bool?
    /// The decoded receipt when `status` is `0` or `21006` and Apple sent one.
    public var receipt: VerifiedReceipt?

    /// Creates a value.
    public init(status: Int, isRetryable: Bool? = nil, receipt: VerifiedReceipt? = nil) {
        self.status = status
        self.isRetryable = isRetryable
        self.receipt = receipt
    }

    /// Decodes a response body. `answeredBy` is the endpoint that sent it, the only hint to the
    /// environment in iOS 6 style responses. Throws `DecodingError` for a body that is not a
    /// verifyReceipt response (no JSON object, no `status`, a malformed transaction).
    ///
    /// Apple's usual answer is read directly (``DirectJSON``): `JSONDecoder` took a fifth of the
    /// job's CPU when verifying receipts at 64 in flight. What the direct reader does not take
    /// goes to `JSONDecoder`, which has the last word.
    public static func decode(_ body: some DataProtocol, answeredBy: VerifiedReceipt.Environment) throws
        -> VerifyReceiptResponse
    {
        let bytes = Array(body)
        return try decodeDirectly(bytes, answeredBy: answeredBy)
            ?? decodeWithJSONDecoder(bytes, answeredBy: answeredBy)
    }

    /// The response read without `JSONDecoder`; nil when the direct reader leaves it to
    /// ``decodeWithJSONDecoder(_:answeredBy:)``, whose answer it otherwise equals.
    static func decodeDirectly(_ body: [UInt8], answeredBy: VerifiedReceipt.Environment) throws
        -> VerifyReceiptResponse?
    {
        guard let wire = body.withUnsafeBufferPointer({ Wire.directly(from: $0) }) else {
            return nil
        }
        return try response(wire, answeredBy: answeredBy)
    }

    /// The response read by `JSONDecoder`: the reference.
    static func decodeWithJSONDecoder(_ body: [UInt8], answeredBy: VerifiedReceipt.Environment) throws
        -> VerifyReceiptResponse
    {
        try response(JSONDecoder().decode(Wire.self, from: Data(body)), answeredBy: answeredBy)
    }

    private static func response(_ wire: Wire, answeredBy: VerifiedReceipt.Environment) throws
        -> VerifyReceiptResponse
    {
        var response = VerifyReceiptResponse(status: wire.status, isRetryable: wire.isRetryable)
        guard wire.status == 0 || wire.status == 21006 else { return response }
        guard let receipt = wire.receipt else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "status \(wire.status) without a receipt object"))
        }
        let environment = wire.environment.map { AppStoreEnvironment(receiptEnvironment: $0) ?? AppStoreEnvironment(rawValue: $0) }
            ?? answeredBy
        response.receipt = VerifiedReceipt(
            status: wire.status,
            environment: environment,
            bundleID: receipt.bundleID,
            applicationVersion: receipt.applicationVersion,
            originalApplicationVersion: receipt.originalApplicationVersion,
            receiptType: receipt.receiptType,
            appItemID: receipt.appItemID,
            receiptCreationDate: receipt.receiptCreationDate,
            requestDate: receipt.requestDate,
            originalPurchaseDate: receipt.originalPurchaseDate,
            inApp: receipt.inApp,
            latestReceiptInfo: wire.latestReceiptInfo,
            pendingRenewalInfo: wire.pendingRenewalInfo,
            latestReceipt: wire.latestReceipt,
            isLegacyFormat: receipt.isLegacyFormat
        )
        return response
    }

    /// The JSON as sent, before it becomes a ``VerifiedReceipt``.
    private struct Wire: AppleJSONDecodable {
        var status: Int
        var isRetryable: Bool?
        var environment: String?
        var receipt: WireReceipt?
        var latestReceiptInfo: [VerifiedReceipt.Transaction] = []
        var latestReceipt: String?
        var pendingRenewalInfo: [VerifiedReceipt.PendingRenewal] = []

        enum Field: String, AppleFieldName {
            case status, isRetryable = "is_retryable", isRetryableDashed = "is-retryable", environment, receipt
            case latestReceiptInfo = "latest_receipt_info", latestExpiredReceiptInfo = "latest_expired_receipt_info"
            case latestReceipt = "latest_receipt", pendingRenewalInfo = "pending_renewal_info"

            static let keys = DirectJSON.Keys(Self.self)
        }

        init(fields c: some AppleJSONObject<Field>) throws {
            guard let status = try c.lenientInt64(.status) else { throw c.missing(.status, "no status") }
            self.status = Int(status)
            isRetryable = try (try? c.lenientBool(.isRetryable)) ?? c.lenientBool(.isRetryableDashed)
            environment = try c.lenientString(.environment)
            if status == 0 || status == 21006 {
                receipt = try c.object(.receipt, as: WireReceipt.self)
                latestReceiptInfo =
                    try c.oneOrMany(.latestReceiptInfo, of: VerifiedReceipt.Transaction.self)
                    + c.oneOrMany(.latestExpiredReceiptInfo, of: VerifiedReceipt.Transaction.self)
                latestReceipt = try c.lenientString(.latestReceipt)
                pendingRenewalInfo = try c.array(.pendingRenewalInfo, of: VerifiedReceipt.PendingRenewal.self) ?? []
            }
        }
    }

    /// `receipt`, in either layout.
    private struct WireReceipt: AppleJSONDecodable {
        var bundleID: String
        var applicationVersion: String?
        var originalApplicationVersion: String?
        var receiptType: String?
        var appItemID: String?
        var receiptCreationDate: Date?
        var requestDate: Date?
        var originalPurchaseDate: Date?
        var inApp: [VerifiedReceipt.Transaction]
        var isLegacyFormat: Bool

        enum Field: String, AppleFieldName {
            case bundleID = "bundle_id", applicationVersion = "application_version", appItemID = "app_item_id"
            case receiptCreationDate = "receipt_creation_date_ms", originalPurchaseDate = "original_purchase_date_ms"
            case inApp = "in_app", legacyBundleID = "bid", legacyApplicationVersion = "bvrs", legacyItemID = "item_id"
            case originalApplicationVersion = "original_application_version", receiptType = "receipt_type"
            case requestDate = "request_date_ms"

            static let keys = DirectJSON.Keys(Self.self)
        }

        init(fields c: some AppleJSONObject<Field>) throws {
            if let bundleID = try c.lenientString(.bundleID) {
                self.bundleID = bundleID
                applicationVersion = try c.lenientString(.applicationVersion)
                appItemID = try c.lenientString(.appItemID)
                receiptCreationDate = try c.lenientMillisecondsDate(.receiptCreationDate)
                originalPurchaseDate = try c.lenientMillisecondsDate(.originalPurchaseDate)
                inApp = try c.array(.inApp, of: VerifiedReceipt.Transaction.self) ?? []
                isLegacyFormat = false
            } else if let bundleID = try c.lenientString(.legacyBundleID) {
                // iOS 6 style: the receipt object is itself the one transaction.
                self.bundleID = bundleID
                applicationVersion = try c.lenientString(.legacyApplicationVersion)
                appItemID = try c.lenientString(.legacyItemID)
                receiptCreationDate = nil
                originalPurchaseDate = nil
                inApp = [try c.whole(as: VerifiedReceipt.Transaction.self)]
                isLegacyFormat = true
            } else {
                throw c.missing(.bundleID, "receipt without bundle_id or bid")
            }
            originalApplicationVersion = try c.lenientString(.originalApplicationVersion)
            receiptType = try c.lenientString(.receiptType)
            requestDate = try c.lenientMillisecondsDate(.requestDate)
        }
    }
}

extension VerifiedReceipt: Encodable {
    /// Writes the receipt in verifyReceipt's modern layout and field names, numbers as strings, so
    /// that tools written against Apple's responses read it.
    public func encode(to encoder: any Encoder) throws {
        var top = encoder.container(keyedBy: AppleCodingKey.self)
        try top.encode(status, forKey: AppleCodingKey("status"))
        try top.encode(environment.rawValue, forKey: AppleCodingKey("environment"))
        var receipt = top.nestedContainer(keyedBy: AppleCodingKey.self, forKey: AppleCodingKey("receipt"))
        try receipt.put(receiptType, "receipt_type")
        try receipt.put(appItemID, "app_item_id")
        try receipt.put(bundleID, "bundle_id")
        try receipt.put(applicationVersion, "application_version")
        try receipt.putDate(receiptCreationDate, "receipt_creation_date")
        try receipt.putDate(requestDate, "request_date")
        try receipt.putDate(originalPurchaseDate, "original_purchase_date")
        try receipt.put(originalApplicationVersion, "original_application_version")
        try receipt.encode(inApp, forKey: AppleCodingKey("in_app"))
        try top.encode(latestReceiptInfo, forKey: AppleCodingKey("latest_receipt_info"))
        if let latestReceipt { try top.encode(latestReceipt, forKey: AppleCodingKey("latest_receipt")) }
        if !pendingRenewalInfo.isEmpty {
            try top.encode(pendingRenewalInfo, forKey: AppleCodingKey("pending_renewal_info"))
        }
    }
}
