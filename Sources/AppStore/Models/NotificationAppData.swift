/// The `appData` object of a notification about the app rather than a purchase: Apple sends it,
/// and no `data`, with `RESCIND_CONSENT`
/// (developer.apple.com/documentation/appstoreservernotifications/appdata, since version 2.19).
public struct NotificationAppData: Codable, Hashable, Sendable {
    /// The app's Apple id.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The environment.
    public var environment: AppStoreEnvironment?
    /// The app transaction, as a JWS of its own (kept as sent; the job has no use for it yet).
    public var signedAppTransactionInfo: String?

    /// An empty object; set the fields that apply.
    public init() {}
}
