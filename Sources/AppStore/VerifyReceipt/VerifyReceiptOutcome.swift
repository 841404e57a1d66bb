import Foundation

/// What verifying one app receipt with verifyReceipt came to. A value, not an error: an invalid
/// receipt and an unreachable Apple are normal results of a nightly run.
public enum VerifyReceiptOutcome: Sendable, Hashable {
    /// Apple confirmed the receipt (status `0`, or `21006`).
    case verified(VerifiedReceipt)
    /// The receipt is not genuine or cannot be verified, for good. `status` is Apple's, or nil
    /// when it was rejected without asking Apple (not base64, not a receipt).
    case invalid(status: Int?, reason: String)
    /// Apple could not answer now (HTTP 5xx, timeout, connection error, a retryable status) and the
    /// call's retry budget is spent. `status` is Apple's last status when there was one: `21002`
    /// in particular is retryable here, and the caller decides when, across runs, it becomes
    /// invalid.
    case retryLater(reason: String, status: Int?)
}

/// verifyReceipt said the request itself is misconfigured (`21004`: the shared secret does not
/// match), which no retry fixes: the run must stop and an operator must fix the configuration.
public struct VerifyReceiptConfigurationError: Error, Sendable, CustomStringConvertible {
    /// Apple's status, `21004`.
    public var status: Int
    /// Which endpoint said it.
    public var environment: VerifiedReceipt.Environment
    /// Explains what to fix. Never contains the secret.
    public var description: String {
        "verifyReceipt (\(environment)) answered \(status): the shared secret does not match the app's; "
            + "check APPLE_SHARED_SECRET"
    }

    /// Creates the error.
    public init(status: Int, environment: VerifiedReceipt.Environment) {
        self.status = status
        self.environment = environment
    }
}

/// The App Store shared secret sent as `password`. Its descriptions are redacted so that a
/// configuration dump or a log line never shows it.
public struct AppleSharedSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; only the request body reads it.
    public let value: String
    /// Wraps a secret.
    public init(_ value: String) { self.value = value }
    /// `<redacted>`.
    public var description: String { "<redacted>" }
    /// `<redacted>`.
    public var debugDescription: String { "<redacted>" }
}
