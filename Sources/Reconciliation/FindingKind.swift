import Postgres

/// The kinds of discrepancy of SPEC section 5, with their severity and suggested action: the one
/// place they are defined. The diff's SQL reads them from the `diff_kinds` table the runner
/// fills from here, and each kind's rule is `sql/diff/findings/<kind>.sql`.
public enum FindingKind: String, Sendable, CaseIterable, Codable, CustomStringConvertible,
    PostgresNonNullDecodable
{
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

    /// The kind as SPEC section 5 spells it (`missed_delivery`), wherever it is interpolated.
    public var description: String { rawValue }

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

    /// The resolutions a person or a policy may decide an item of the kind with (SPEC section 6:
    /// one the kind does not allow is refused); dismissing is always possible. Each action must
    /// be one the finding can turn into the goods going where they belong: a grant where goods
    /// are owed, a revoke where goods are held that should not be, a move where the wrong account
    /// holds them.
    public var allowedResolutions: Set<Resolution> {
        switch self {
        // Goods are owed and none is held: give them.
        case .missedDelivery: [.granted, .noAction]
        // Goods are held that Apple did not sell, or no longer sold: take them back.
        case .duplicateDelivery, .refundedDelivery, .unverifiedDelivery, .environmentMismatch: [.revoked, .noAction]
        // The wrong account holds the buyer's goods: move them, take them back, or give the
        // buyer theirs and leave the other account its credit.
        case .wrongAccount: [.moved, .granted, .revoked, .noAction]
        // Another product, or other units, than Apple sold: give what is missing or take back
        // what is over.
        case .productMismatch, .quantityMismatch: [.granted, .revoked, .noAction]
        // Several accounts carry one purchase: take the goods back, or move them once the buyer is known.
        case .sharedReceipt: [.moved, .revoked, .noAction]
        // Another app's receipt: nothing here for the app to give or take.
        case .foreignBundle: [.noAction]
        }
    }

    /// Whether the kind's findings are about an upload rather than a transaction: the diff
    /// judges them over the uploads in scope (`diff_scope_uploads`) every run, and its shared
    /// stages decide their items by that alone, whatever the transactions in scope (the value
    /// `:'upload_kinds'` of `scope/touched_by_run.sql`, `75_unchanged.sql` and
    /// `82_queue_auto_resolve.sql`).
    public var isAboutAnUpload: Bool { self == .foreignBundle }

    /// Whether the rule runs in a job whose counted environment is `environment`: a sandbox
    /// purchase credited as real money is a finding only where real money counts.
    public func applies(in environment: Settings.Environment) -> Bool {
        self != .environmentMismatch || environment == .production
    }

    /// Whether an item's account (`user_id`) is the buyer (the one owed the goods) rather than
    /// the account the ledger credited.
    public var accountIsTheBuyer: Bool { self == .missedDelivery || self == .wrongAccount }

    /// Whether the kind's findings are about a credit no source of Apple's confirms: while its
    /// item is open, every run asks Get Transaction Info about the transaction, whatever the
    /// window (the value `:'unconfirmed_kinds'` of `sql/serverapi/transaction_info_candidates.sql`).
    public var asksAppleWhileOpen: Bool { self == .unverifiedDelivery }

    /// Whether an open item of the kind disputes who holds the transaction's goods: no account's
    /// consent then counts for a refund request's answer (`:'disputed_kinds'` of
    /// `sql/consumption/ledger_facts.sql`).
    public var disputesTheHolder: Bool { self == .wrongAccount || self == .sharedReceipt }

    /// The kinds about an upload, by name.
    static var uploadKinds: [String] { allCases.filter(\.isAboutAnUpload).map(\.rawValue) }

    /// The kinds whose open items Get Transaction Info is asked about, by name.
    static var unconfirmedKinds: [String] { allCases.filter(\.asksAppleWhileOpen).map(\.rawValue) }

    /// The kinds whose open items dispute who holds the goods, by name.
    static var disputedKinds: [String] { allCases.filter(\.disputesTheHolder).map(\.rawValue) }
}
