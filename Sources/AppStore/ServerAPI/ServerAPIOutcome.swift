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
