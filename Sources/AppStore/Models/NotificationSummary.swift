/// The `summary` object of a `RENEWAL_EXTENSION` notification.
public struct NotificationSummary: Codable, Hashable, Sendable {
    /// The extension request's id.
    public var requestIdentifier: String?
    /// The environment.
    public var environment: AppStoreEnvironment?
    /// The app's Apple id.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The subscription product extended.
    public var productId: String?
    /// Storefronts the extension applied to.
    public var storefrontCountryCodes: [String]?
    /// Subscriptions that could not be extended.
    public var failedCount: Int64?
    /// Subscriptions extended.
    public var succeededCount: Int64?

    /// An empty object; set the fields that apply.
    public init() {}
}
