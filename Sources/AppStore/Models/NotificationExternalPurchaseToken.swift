import Foundation

/// The `externalPurchaseToken` object of an `EXTERNAL_PURCHASE_TOKEN` notification, which carries
/// neither `data` nor `appData`
/// (developer.apple.com/documentation/appstoreservernotifications/externalpurchasetoken, since
/// version 2.10): the decoded token of an external purchase the app reports to Apple. It names no
/// environment: a sandbox token's `externalPurchaseId` starts with `SANDBOX`, as Apple's own
/// libraries read it.
public struct NotificationExternalPurchaseToken: Codable, Hashable, Sendable {
    /// The token's unique identifier.
    public var externalPurchaseId: String?
    /// When the system created the token.
    public var tokenCreationDate: Date?
    /// The app's Apple id.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The kind of token (`SERVICES`, `ACQUISITION`), kept as sent.
    public var tokenType: String?

    /// An empty object; set the fields that apply.
    public init() {}

    /// The environment the token belongs to, read from its identifier.
    public var environment: AppStoreEnvironment? {
        guard let externalPurchaseId else { return nil }
        return externalPurchaseId.hasPrefix("SANDBOX") ? .sandbox : .production
    }
}
