/// One page of Get Transaction History v2 (`HistoryResponse`).
public struct HistoryResponse: Codable, Hashable, Sendable {
    /// The token to ask for the next page with; repeat every other query parameter unchanged.
    public var revision: String?
    /// The app's bundle id.
    public var bundleId: String?
    /// The app's Apple id (absent in sandbox).
    public var appAppleId: Int64?
    /// The environment that answered.
    public var environment: AppStoreEnvironment?
    /// Whether another page follows.
    public var hasMore: Bool?
    /// Up to 20 signed transactions, sorted by modification (ascending by default).
    public var signedTransactions: [String]?

    /// Creates a page.
    public init(
        revision: String? = nil, bundleId: String? = nil, appAppleId: Int64? = nil,
        environment: AppStoreEnvironment? = nil, hasMore: Bool? = nil, signedTransactions: [String]? = nil
    ) {
        self.revision = revision
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.hasMore = hasMore
        self.signedTransactions = signedTransactions
    }
}
