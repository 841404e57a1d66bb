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

    /// Everything the product decides by a finding's kind, written once per kind: SPEC section 5's
    /// severity and suggested action, the resolutions section 6 allows, and the few facts the
    /// diff, the queue, the refund answers and Get Transaction Info depend on. Every field is
    /// required and ``contract`` has no `default:`, so a new kind does not compile until someone
    /// has chosen each of them (docs/architecture.md, "Adding a finding kind").
    public struct Contract: Sendable, Equatable {
        /// How urgent the finding is (SPEC section 5's table).
        public var severity: Severity
        /// What support staff should probably do (SPEC section 5's table).
        public var suggestedAction: SuggestedAction
        /// The resolutions a person or a policy may decide an item of the kind with (SPEC section
        /// 6: one the kind does not allow is refused). Each action must be one the finding can turn
        /// into the goods going where they belong: a grant where goods are owed, a revoke where
        /// goods are held that should not be, a move where the wrong account holds them.
        /// `no_action` is always among them.
        public var allowedResolutions: Set<Resolution>
        /// What a finding is about: a transaction, or an upload (judged over the uploads in scope,
        /// `diff_scope_uploads`, every run; the value `:'upload_kinds'` of
        /// `scope/touched_by_run.sql`, `75_unchanged.sql` and `82_queue_auto_resolve.sql`).
        public var subject: Subject
        /// Whose account an item's `user_id` is.
        public var account: Account
        /// Where the rule runs: in every environment, or only where real money counts.
        public var environments: Environments
        /// Whether the finding is about a credit no source of Apple's confirms: while its item is
        /// open, every run asks Get Transaction Info about the transaction, whatever the window (the
        /// value `:'unconfirmed_kinds'` of `sql/serverapi/transaction_info_candidates.sql`).
        public var asksAppleWhileOpen: Bool
        /// Whether an open item disputes who holds the transaction's goods: no account's consent
        /// then counts for a refund request's answer (`:'disputed_kinds'` of
        /// `sql/consumption/ledger_facts.sql`).
        public var disputesTheHolder: Bool

        public enum Subject: Sendable, Equatable { case transaction, upload }
        public enum Account: Sendable, Equatable {
            /// The buyer, the one owed the goods.
            case buyer
            /// The account the ledger credited (or, for an upload's finding, the uploader).
            case credited
        }
        public enum Environments: Sendable, Equatable {
            case every
            /// Only under `RECONCILE_ENVIRONMENT=production`: a sandbox purchase credited as real
            /// money is a finding only where real money counts.
            case productionOnly
        }

        public init(
            severity: Severity, suggestedAction: SuggestedAction, allowedResolutions: Set<Resolution>,
            subject: Subject, account: Account, environments: Environments, asksAppleWhileOpen: Bool,
            disputesTheHolder: Bool
        ) {
            self.severity = severity
            self.suggestedAction = suggestedAction
            self.allowedResolutions = allowedResolutions.union([.noAction])
            self.subject = subject
            self.account = account
            self.environments = environments
            self.asksAppleWhileOpen = asksAppleWhileOpen
            self.disputesTheHolder = disputesTheHolder
        }
    }

    /// The kind's contract: one exhaustive description per kind.
    public var contract: Contract {
        switch self {
        // Apple sold it, nobody holds it: give the buyer their goods.
        case .missedDelivery:
            Contract(
                severity: .high, suggestedAction: .grant, allowedResolutions: [.granted],
                subject: .transaction, account: .buyer, environments: .every,
                asksAppleWhileOpen: false, disputesTheHolder: false)
        // More units credited than Apple sold: take back what is over.
        case .duplicateDelivery:
            Contract(
                severity: .medium, suggestedAction: .revoke, allowedResolutions: [.revoked],
                subject: .transaction, account: .credited, environments: .every,
                asksAppleWhileOpen: false, disputesTheHolder: false)
        // The wrong account holds the buyer's goods: move them, take them back, or give the
        // buyer theirs and leave the other account its credit.
        case .wrongAccount:
            Contract(
                severity: .high, suggestedAction: .move, allowedResolutions: [.moved, .granted, .revoked],
                subject: .transaction, account: .buyer, environments: .every,
                asksAppleWhileOpen: false, disputesTheHolder: true)
        // Another product than Apple sold: give what is missing or take back what is over.
        case .productMismatch:
            Contract(
                severity: .medium, suggestedAction: .investigate, allowedResolutions: [.granted, .revoked],
                subject: .transaction, account: .credited, environments: .every,
                asksAppleWhileOpen: false, disputesTheHolder: false)
        // Other units than Apple sold: give what is missing or take back what is over.
        case .quantityMismatch:
            Contract(
                severity: .medium, suggestedAction: .investigate, allowedResolutions: [.granted, .revoked],
                subject: .transaction, account: .credited, environments: .every,
                asksAppleWhileOpen: false, disputesTheHolder: false)
        // Apple no longer sells it, the goods are still held: take them back.
        case .refundedDelivery:
            Contract(
                severity: .medium, suggestedAction: .revoke, allowedResolutions: [.revoked],
                subject: .transaction, account: .credited, environments: .every,
                asksAppleWhileOpen: false, disputesTheHolder: false)
        // Goods held that no source of Apple's confirms were sold.
        case .unverifiedDelivery:
            Contract(
                severity: .high, suggestedAction: .investigate, allowedResolutions: [.revoked],
                subject: .transaction, account: .credited, environments: .every,
                asksAppleWhileOpen: true, disputesTheHolder: false)
        // A sandbox purchase credited as real money.
        case .environmentMismatch:
            Contract(
                severity: .low, suggestedAction: .investigate, allowedResolutions: [.revoked],
                subject: .transaction, account: .credited, environments: .productionOnly,
                asksAppleWhileOpen: false, disputesTheHolder: false)
        // Another app's receipt: nothing here for the app to give or take.
        case .foreignBundle:
            Contract(
                severity: .medium, suggestedAction: .investigate, allowedResolutions: [],
                subject: .upload, account: .credited, environments: .every,
                asksAppleWhileOpen: false, disputesTheHolder: false)
        // Several accounts carry one purchase: take the goods back, or move them once the buyer
        // is known.
        case .sharedReceipt:
            Contract(
                severity: .medium, suggestedAction: .investigate, allowedResolutions: [.moved, .revoked],
                subject: .transaction, account: .credited, environments: .every,
                asksAppleWhileOpen: false, disputesTheHolder: true)
        }
    }

    /// How urgent the finding is.
    public var severity: Severity { contract.severity }

    /// What support staff should probably do.
    public var suggestedAction: SuggestedAction { contract.suggestedAction }

    /// The resolutions a person or a policy may decide an item of the kind with; dismissing
    /// (`no_action`) is always possible.
    public var allowedResolutions: Set<Resolution> { contract.allowedResolutions }

    /// Whether the kind's findings are about an upload rather than a transaction.
    public var isAboutAnUpload: Bool { contract.subject == .upload }

    /// Whether the rule runs in a job whose counted environment is `environment`.
    public func applies(in environment: Settings.Environment) -> Bool {
        switch contract.environments {
        case .every: true
        case .productionOnly: environment == .production
        }
    }

    /// Whether an item's account (`user_id`) is the buyer (the one owed the goods) rather than
    /// the account the ledger credited.
    public var accountIsTheBuyer: Bool { contract.account == .buyer }

    /// Whether open items of the kind make every run ask Get Transaction Info.
    public var asksAppleWhileOpen: Bool { contract.asksAppleWhileOpen }

    /// Whether an open item of the kind disputes who holds the transaction's goods.
    public var disputesTheHolder: Bool { contract.disputesTheHolder }

    /// The kinds about an upload, by name.
    static var uploadKinds: [String] { allCases.filter(\.isAboutAnUpload).map(\.rawValue) }

    /// The kinds whose open items Get Transaction Info is asked about, by name.
    static var unconfirmedKinds: [String] { allCases.filter(\.asksAppleWhileOpen).map(\.rawValue) }

    /// The kinds whose open items dispute who holds the goods, by name.
    static var disputedKinds: [String] { allCases.filter(\.disputesTheHolder).map(\.rawValue) }
}
