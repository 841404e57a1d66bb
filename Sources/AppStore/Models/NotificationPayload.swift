import Foundation

/// The decoded `signedPayload` of an App Store Server Notification V2
/// (`ResponseBodyV2DecodedPayload`).
public struct NotificationPayload: Codable, Hashable, Sendable {
    /// What happened.
    public var notificationType: NotificationType?
    /// Details of what happened.
    public var subtype: NotificationSubtype?
    /// The notification's id; Apple resends with the same id, so deduplicate on it.
    public var notificationUUID: String?
    /// The app and transaction data (absent in summary notifications).
    public var data: NotificationData?
    /// Summary of a bulk renewal-date extension.
    public var summary: NotificationSummary?
    /// The app, for notifications about the app rather than a purchase (`RESCIND_CONSENT`).
    public var appData: NotificationAppData?
    /// The external purchase token, for `EXTERNAL_PURCHASE_TOKEN` (no `data`, no `appData`).
    public var externalPurchaseToken: NotificationExternalPurchaseToken?
    /// The notification format version ("2.0").
    public var version: String?
    /// When Apple signed the notification.
    public var signedDate: Date?

    /// An empty payload; set the fields that apply.
    public init() {}

    /// The bundle id the notification is about, wherever the notification kind carries it.
    var bundleId: String? { data?.bundleId ?? summary?.bundleId ?? appData?.bundleId ?? externalPurchaseToken?.bundleId }
    /// The environment the notification is about.
    var environment: AppStoreEnvironment? {
        data?.environment ?? summary?.environment ?? appData?.environment
            ?? externalPurchaseToken?.environment
    }
    /// The app's Apple id, wherever the notification kind carries it.
    var appAppleId: Int64? {
        data?.appAppleId ?? summary?.appAppleId ?? appData?.appAppleId
            ?? externalPurchaseToken?.appAppleId
    }
}
