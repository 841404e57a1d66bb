/// Who did something to a review item: the name recorded in `review_events.actor`, an item's
/// `resolved_by`, `pending_by` and `approved_by`, and the outbox's `decided_by`. The product's own
/// actors have names no person may take (``ReviewActor/validatedName(_:)`` refuses them,
/// whatever their case, accents or width), so a recorded name says which kind of actor it was.
public enum ReviewActor: Sendable, Hashable, CustomStringConvertible {
    /// The job itself: a run's items and auto-resolutions, the desk's lookups.
    case job
    /// The notification receiver's passes.
    case receiver
    /// A policy rule (SPEC section 17), recorded as `policy:<rule>`.
    case policy(rule: String)
    /// A person, by a name ``person(validating:)`` accepted.
    case person(String)

    /// What the job records.
    public static let jobName = "reconcile"
    /// What the receiver records.
    public static let receiverName = "receiver"
    /// What every policy's name starts with.
    public static let policyPrefix = "policy:"

    /// The name as it is recorded.
    public var name: String {
        switch self {
        case .job: Self.jobName
        case .receiver: Self.receiverName
        case .policy(let rule): Self.policyPrefix + rule
        case .person(let name): name
        }
    }

    public var description: String { name }

    /// The actor a recorded name stands for.
    public init(recorded name: String) {
        if name == Self.jobName {
            self = .job
        } else if name == Self.receiverName {
            self = .receiver
        } else if name.hasPrefix(Self.policyPrefix) {
            self = .policy(rule: String(name.dropFirst(Self.policyPrefix.count)))
        } else {
            self = .person(name)
        }
    }

    /// A person by a trimmed, validated name (``ReviewActor/validatedName(_:)``): never one the
    /// product acts under.
    public static func person(validating raw: String) throws -> ReviewActor {
        .person(try ReviewActor.validatedName(raw))
    }

    /// Whether a person, rather than the product, acted.
    public var isPerson: Bool {
        if case .person = self { return true }
        return false
    }
}
