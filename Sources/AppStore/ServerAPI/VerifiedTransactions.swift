/// Signed transactions from the Server API after verification, deduplicated.
public struct VerifiedTransactions: Sendable, Hashable {
    /// The environment that answered.
    public var environment: AppStoreEnvironment
    /// One entry per `transactionId`, the one with the newest `signedDate` (a transaction
    /// refunded while the pages were read arrives twice), sorted by purchase date.
    public var transactions: [JWSTransaction]
    /// Signed transactions that failed verification: reported so that an operator sees them,
    /// never merged into ``transactions``.
    public var rejected: [RejectedSignedTransaction]
    /// Pages read.
    public var pages: Int
    /// Signed transactions received before deduplication.
    public var received: Int

    /// Creates a result.
    public init(
        environment: AppStoreEnvironment, transactions: [JWSTransaction], rejected: [RejectedSignedTransaction] = [],
        pages: Int, received: Int
    ) {
        self.environment = environment
        self.transactions = transactions
        self.rejected = rejected
        self.pages = pages
        self.received = received
    }
}

/// A signed transaction the Server API returned that did not verify.
public struct RejectedSignedTransaction: Sendable, Hashable {
    /// The token as received (it is Apple's data, not a secret).
    public var token: String
    /// Why it was rejected.
    public var failure: JWSVerificationFailure

    /// Creates a record.
    public init(token: String, failure: JWSVerificationFailure) {
        self.token = token
        self.failure = failure
    }
}
