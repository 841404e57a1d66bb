/// The answer of Look Up Order ID (`OrderLookupResponse`).
public struct OrderLookupResponse: Codable, Hashable, Sendable {
    /// `0` the order id is valid, `1` it is not (Apple answers HTTP 200 either way).
    public var status: Int?
    /// The order's transactions, signed.
    public var signedTransactions: [String]?

    /// Creates an answer.
    public init(status: Int? = nil, signedTransactions: [String]? = nil) {
        self.status = status
        self.signedTransactions = signedTransactions
    }
}
