/// A notification whose signed payload and nested signed data all verified.
public struct VerifiedNotification: Hashable, Sendable {
    /// The notification itself.
    public var payload: NotificationPayload
    /// `data.signedTransactionInfo`, verified and decoded.
    public var transaction: JWSTransaction?
    /// `data.signedRenewalInfo`, verified and decoded.
    public var renewalInfo: JWSRenewalInfo?

    /// The id to deduplicate stored notifications on.
    public var notificationUUID: String? { payload.notificationUUID }

    /// Combines a verified payload with its verified nested data.
    public init(payload: NotificationPayload, transaction: JWSTransaction? = nil, renewalInfo: JWSRenewalInfo? = nil) {
        self.payload = payload
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }
}
