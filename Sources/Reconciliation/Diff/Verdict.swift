import AppStore

/// What verifying one upload with Apple established.
public enum Verdict: Sendable, Equatable {
    /// Apple confirmed the upload: its environment, bundle and transactions.
    case verified(VerifiedUpload)
    /// Apple (or local verification) rejected it for good.
    case invalid(code: VerificationFailure, reason: String, appleStatus: Int?)
    /// A passing failure: try again later; nothing is judged on it meanwhile.
    case retry(reason: String, appleStatus: Int?)
}

/// An upload Apple confirmed.
public struct VerifiedUpload: Sendable, Equatable {
    /// Which store verified it.
    public var store: Store = .appStore
    /// How it was verified.
    public var method: VerificationMethod
    /// Apple's status (verifyReceipt), when there is one.
    public var appleStatus: Int?
    /// `Production` or `Sandbox`; empty for a foreign bundle's transaction, which is not judged.
    public var environment: AppStoreEnvironment
    /// The bundle the receipt or transaction belongs to.
    public var bundleID: String
    /// Every transaction it carries.
    public var transactions: [AppleTransactionRecord]

    /// Creates a verified upload.
    public init(method: VerificationMethod, appleStatus: Int?, environment: AppStoreEnvironment, bundleID: String,
                transactions: [AppleTransactionRecord]) {
        self.method = method
        self.appleStatus = appleStatus
        self.environment = environment
        self.bundleID = bundleID
        self.transactions = transactions
    }
}
