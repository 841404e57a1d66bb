/// What one Developer API call came to. A value, not an error: a token Google does not know and
/// a Google that cannot answer now are ordinary results of a nightly run.
public enum PlayAPIOutcome<Value: Sendable>: Sendable {
    /// Google answered.
    case found(Value)
    /// HTTP 404: Google does not know the token or order.
    case notFound
    /// HTTP 410 (`purchaseTokenNoLongerValid`): a purchase Google no longer keeps.
    case gone
    /// Google refused the request for good (another 4xx), with its reason.
    case rejected(httpStatus: Int, reason: String)
    /// Google could not answer now (HTTP 5xx, 409 `concurrentUpdate`, 429, timeouts, connection
    /// errors) and the call's retry budget is spent; ask again in a later run.
    case retryLater(reason: String, httpStatus: Int?)

    /// The value when found.
    public var value: Value? {
        if case .found(let value) = self { value } else { nil }
    }
}

extension PlayAPIOutcome: Equatable where Value: Equatable {}
extension PlayAPIOutcome: Hashable where Value: Hashable {}
