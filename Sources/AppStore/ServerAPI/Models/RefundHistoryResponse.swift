/// One page of Get Refund History (`RefundHistoryResponse`).
public struct RefundHistoryResponse: Codable, Hashable, Sendable {
    /// Refunded transactions, signed.
    public var signedTransactions: [String]?
    /// The token to ask for the next page with.
    public var revision: String?
    /// Whether another page follows.
    public var hasMore: Bool?

    /// Creates a page.
    public init(signedTransactions: [String]? = nil, revision: String? = nil, hasMore: Bool? = nil) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }
}
