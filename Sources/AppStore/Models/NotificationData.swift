/// The `data` object of a notification: which app, and the signed transaction and renewal info.
public struct NotificationData: Codable, Hashable, Sendable {
    /// The app's Apple id (absent in sandbox).
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app's build version.
    public var bundleVersion: String?
    /// The environment.
    public var environment: AppStoreEnvironment?
    /// The transaction, as a JWS of its own.
    public var signedTransactionInfo: String?
    /// The subscription renewal info, as a JWS of its own.
    public var signedRenewalInfo: String?
    /// The subscription status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).
    public var status: Int?
    /// Why the customer asked for a refund (`CONSUMPTION_REQUEST` only).
    public var consumptionRequestReason: String?

    /// An empty object; set the fields that apply.
    public init() {}
}
