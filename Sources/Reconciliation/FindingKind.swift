/// The kinds of discrepancy of SPEC section 5, with their severity and suggested action: the one
/// place they are defined. The diff's SQL reads them from the `diff_kinds` table the runner
/// fills from here, and each kind's rule is `sql/diff/findings/<kind>.sql`.
public enum FindingKind: String, Sendable, CaseIterable, Codable {
    case missedDelivery = "missed_delivery"
    case duplicateDelivery = "duplicate_delivery"
    case wrongAccount = "wrong_account"
    case productMismatch = "product_mismatch"
    case quantityMismatch = "quantity_mismatch"
    case refundedDelivery = "refunded_delivery"
    case unverifiedDelivery = "unverified_delivery"
    case environmentMismatch = "environment_mismatch"
    case foreignBundle = "foreign_bundle"
    case sharedReceipt = "shared_receipt"

    /// How urgent the finding is.
    public var severity: Severity {
        switch self {
        case .missedDelivery, .wrongAccount, .unverifiedDelivery: .high
        case .environmentMismatch: .low
        default: .medium
        }
    }

    /// What support staff should probably do.
    public var suggestedAction: SuggestedAction {
        switch self {
        case .missedDelivery: .grant
        case .duplicateDelivery, .refundedDelivery: .revoke
        case .wrongAccount: .move
        default: .investigate
        }
    }
}
