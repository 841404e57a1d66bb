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
    public static func decode(_ body: some DataProtocol, answeredBy: VerifiedReceipt.Environment) throws
        -> VerifyReceiptResponse
    {
        let wire = try JSONDecoder().decode(Wire.self, from: Data(body))
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
    private struct Wire: Decodable {
        var status: Int
        var isRetryable: Bool?
        var environment: String?
        var receipt: WireReceipt?
        var latestReceiptInfo: [VerifiedReceipt.Transaction] = []
        var latestReceipt: String?
        var pendingRenewalInfo: [VerifiedReceipt.PendingRenewal] = []

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: AppleCodingKey.self)
            guard let status = try c.lenientInt64(AppleCodingKey("status")) else {
                throw DecodingError.keyNotFound(
                    AppleCodingKey("status"), .init(codingPath: [], debugDescription: "no status"))
            }
            self.status = Int(status)
            isRetryable =
                try (try? c.lenientBool(AppleCodingKey("is_retryable")))
                ?? c.lenientBool(AppleCodingKey("is-retryable"))
            environment = try c.lenientString(AppleCodingKey("environment"))
            if status == 0 || status == 21006 {
                receipt = try c.decodeIfPresent(WireReceipt.self, forKey: AppleCodingKey("receipt"))
                latestReceiptInfo =
                    try c.decodeOneOrMany(AppleCodingKey("latest_receipt_info"))
                    + c.decodeOneOrMany(AppleCodingKey("latest_expired_receipt_info"))
                latestReceipt = try c.lenientString(AppleCodingKey("latest_receipt"))
                pendingRenewalInfo =
                    try c.decodeIfPresent([VerifiedReceipt.PendingRenewal].self,
                        forKey: AppleCodingKey("pending_renewal_info")) ?? []
            }
        }
    }

    /// `receipt`, in either layout.
    private struct WireReceipt: Decodable {
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

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: AppleCodingKey.self)
            func key(_ name: String) -> AppleCodingKey { AppleCodingKey(name) }
            if let bundleID = try c.lenientString(key("bundle_id")) {
                self.bundleID = bundleID
                applicationVersion = try c.lenientString(key("application_version"))
                appItemID = try c.lenientString(key("app_item_id"))
                receiptCreationDate = try c.lenientMillisecondsDate(key("receipt_creation_date_ms"))
                originalPurchaseDate = try c.lenientMillisecondsDate(key("original_purchase_date_ms"))
                inApp = try c.decodeIfPresent([VerifiedReceipt.Transaction].self, forKey: key("in_app")) ?? []
                isLegacyFormat = false
            } else if let bundleID = try c.lenientString(key("bid")) {
                // iOS 6 style: the receipt object is itself the one transaction.
                self.bundleID = bundleID
                applicationVersion = try c.lenientString(key("bvrs"))
                appItemID = try c.lenientString(key("item_id"))
                receiptCreationDate = nil
                originalPurchaseDate = nil
                inApp = [try VerifiedReceipt.Transaction(from: decoder)]
                isLegacyFormat = true
            } else {
                throw DecodingError.keyNotFound(
                    key("bundle_id"), .init(codingPath: c.codingPath, debugDescription: "receipt without bundle_id or bid"))
            }
            originalApplicationVersion = try c.lenientString(key("original_application_version"))
            receiptType = try c.lenientString(key("receipt_type"))
            requestDate = try c.lenientMillisecondsDate(key("request_date_ms"))
        }
    }
}

extension KeyedDecodingContainer where Key == AppleCodingKey {
    /// iOS 6 style responses send `latest_receipt_info` as one object, newer ones as an array.
    fileprivate func decodeOneOrMany(_ key: Key) throws -> [VerifiedReceipt.Transaction] {
        guard contains(key), try !decodeNil(forKey: key) else { return [] }
        if let many = try? decode([VerifiedReceipt.Transaction].self, forKey: key) { return many }
        return [try decode(VerifiedReceipt.Transaction.self, forKey: key)]
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
        func put(_ value: String?, _ name: String) throws {
            if let value { try receipt.encode(value, forKey: AppleCodingKey(name)) }
        }
        func putDate(_ date: Date?, _ name: String) throws {
            guard let date else { return }
            try put(AppleDateFormat.gmt(date), name)
            try put(AppleDateFormat.milliseconds(date), name + "_ms")
            try put(AppleDateFormat.pacific(date), name + "_pst")
        }
        try put(receiptType, "receipt_type")
        try put(appItemID, "app_item_id")
        try put(bundleID, "bundle_id")
        try put(applicationVersion, "application_version")
        try putDate(receiptCreationDate, "receipt_creation_date")
        try putDate(requestDate, "request_date")
        try putDate(originalPurchaseDate, "original_purchase_date")
        try put(originalApplicationVersion, "original_application_version")
        try receipt.encode(inApp, forKey: AppleCodingKey("in_app"))
        try top.encode(latestReceiptInfo, forKey: AppleCodingKey("latest_receipt_info"))
        if let latestReceipt { try top.encode(latestReceipt, forKey: AppleCodingKey("latest_receipt")) }
        if !pendingRenewalInfo.isEmpty {
            try top.encode(pendingRenewalInfo, forKey: AppleCodingKey("pending_renewal_info"))
        }
    }
}
