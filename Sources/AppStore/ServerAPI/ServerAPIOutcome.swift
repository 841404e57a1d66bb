/// What one Server API call came to. A value, not an error: a transaction Apple does not know
/// and an Apple that cannot answer now are ordinary results of a nightly run.
public enum ServerAPIOutcome<Value: Sendable>: Sendable {
    /// Apple answered and every signed transaction it returned was verified (or, for lists,
    /// set aside in ``VerifiedTransactions/rejected``).
    case found(Value)
    /// Apple does not know the id in any configured environment (`4040010` from each, or an
    /// order lookup answered `status 1`).
    case notFound
    /// Apple refused the request for good (`4000006` invalid transaction id, …).
    case rejected(errorCode: Int?, reason: String)
    /// The one signed transaction Apple returned did not verify: reported, never trusted.
    case unverifiable(JWSVerificationFailure)
    /// Apple could not answer now (HTTP 5xx, 429, timeouts, connection errors, a retryable
    /// code) and the call's retry budget is spent; ask again in a later run.
    case retryLater(reason: String, httpStatus: Int?, errorCode: Int?)

    /// The value when found.
    public var value: Value? {
        if case .found(let value) = self { value } else { nil }
    }
}

extension ServerAPIOutcome: Equatable where Value: Equatable {}
extension ServerAPIOutcome: Hashable where Value: Hashable {}

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

/// The Server API refused the credentials (HTTP 401): the key, issuer id or bundle id is wrong,
/// or the app was never released (production answers 401 then). No retry fixes it; the run
/// stops with this message.
public struct ServerAPIConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status, 401.
    public var httpStatus: Int
    /// Which environment said it.
    public var environment: AppStoreEnvironment
    /// Explains what to check. Never contains the key or the token.
    public var description: String {
        "App Store Server API (\(environment)) answered HTTP \(httpStatus): check APPSTORE_KEY_ID, APPSTORE_ISSUER_ID, "
            + "APPSTORE_PRIVATE_KEY_FILE and the bundle id (production also answers 401 for an app never released)"
    }

    /// Creates the error.
    public init(httpStatus: Int, environment: AppStoreEnvironment) {
        self.httpStatus = httpStatus
        self.environment = environment
    }
}
