/// The kind of App Store Server Notification V2 (`notificationType`).
public struct NotificationType: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: String
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// What the job records for a signed notification that names no type at all.
    public static let unknown = NotificationType(rawValue: "UNKNOWN")
    /// A one-time purchase (consumable, non-consumable, non-renewing subscription).
    public static let oneTimeCharge = NotificationType(rawValue: "ONE_TIME_CHARGE")
    /// Apple refunded a transaction.
    public static let refund = NotificationType(rawValue: "REFUND")
    /// Apple declined a refund request.
    public static let refundDeclined = NotificationType(rawValue: "REFUND_DECLINED")
    /// Apple reversed an earlier refund.
    public static let refundReversed = NotificationType(rawValue: "REFUND_REVERSED")
    /// Apple asks for consumption information about a refund request.
    public static let consumptionRequest = NotificationType(rawValue: "CONSUMPTION_REQUEST")
    /// Family Sharing access was revoked.
    public static let revoke = NotificationType(rawValue: "REVOKE")
    /// The customer subscribed.
    public static let subscribed = NotificationType(rawValue: "SUBSCRIBED")
    /// A subscription renewed.
    public static let didRenew = NotificationType(rawValue: "DID_RENEW")
    /// A subscription failed to renew.
    public static let didFailToRenew = NotificationType(rawValue: "DID_FAIL_TO_RENEW")
    /// The customer changed the renewal preference.
    public static let didChangeRenewalPref = NotificationType(rawValue: "DID_CHANGE_RENEWAL_PREF")
    /// The customer turned automatic renewal on or off.
    public static let didChangeRenewalStatus = NotificationType(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    /// A subscription expired.
    public static let expired = NotificationType(rawValue: "EXPIRED")
    /// The billing grace period ended.
    public static let gracePeriodExpired = NotificationType(rawValue: "GRACE_PERIOD_EXPIRED")
    /// The customer redeemed an offer.
    public static let offerRedeemed = NotificationType(rawValue: "OFFER_REDEEMED")
    /// A price increase was announced or accepted.
    public static let priceIncrease = NotificationType(rawValue: "PRICE_INCREASE")
    /// A renewal date extension completed.
    public static let renewalExtended = NotificationType(rawValue: "RENEWAL_EXTENDED")
    /// A bulk renewal date extension finished.
    public static let renewalExtension = NotificationType(rawValue: "RENEWAL_EXTENSION")
    /// A test notification requested through the Server API.
    public static let test = NotificationType(rawValue: "TEST")
    /// The customer withdrew consent to share data with the app; carries `appData`, no `data`.
    public static let rescindConsent = NotificationType(rawValue: "RESCIND_CONSENT")
    /// An external purchase token to report; carries `externalPurchaseToken`, no `data`.
    public static let externalPurchaseToken = NotificationType(rawValue: "EXTERNAL_PURCHASE_TOKEN")
}
