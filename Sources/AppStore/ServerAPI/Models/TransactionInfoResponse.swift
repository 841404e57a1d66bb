/// The answer of Get Transaction Info (`TransactionInfoResponse`).
public struct TransactionInfoResponse: Codable, Hashable, Sendable {
    /// The transaction, signed.
    public var signedTransactionInfo: String?

    /// Creates an answer.
    public init(signedTransactionInfo: String? = nil) {
        self.signedTransactionInfo = signedTransactionInfo
    }
}
