import Foundation

/// Why a review command was refused. Each case says what the item's state is and what to do.
public enum ReviewError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No item has this id.
    case notFound(id: Int64)
    /// Someone else claimed it; claiming it anyway needs `force`.
    case claimedBySomeoneElse(id: Int64, assignee: String)
    /// A person already resolved or dismissed it; a decision is final.
    case alreadyDecided(id: Int64, status: ReviewStatus, resolution: Resolution?, by: String?, at: Date?)
    /// The job closed it because a later run no longer detects the condition.
    case autoResolved(id: Int64)
    /// The decision cannot be turned into an action from the evidence (e.g. the buyer is unknown).
    case actionNotApplicable(id: Int64, resolution: Resolution, reason: String)
    /// A value given to the command is not acceptable (empty name, note too long).
    case invalidInput(String)
    /// A decision on the item waits for a second person's approval: approve or reject it first.
    case awaitingApproval(id: Int64, resolution: Resolution?, by: String?)
    /// The person approving is the one who decided; another person must.
    case ownDecision(id: Int64, by: String)
    /// Approve or reject asked of an item with no decision waiting.
    case notAwaitingApproval(id: Int64, status: ReviewStatus)
    /// Approve or reject from a page that showed another decision than the one waiting now
    /// (`resolution` by `by`): withdrawn and decided again meanwhile.
    case decisionChanged(id: Int64, resolution: Resolution, by: String)

    public var description: String {
        switch self {
        case .notFound(let id):
            return "review item \(id) does not exist"
        case .claimedBySomeoneElse(let id, let assignee):
            return "review item \(id) is claimed by \(assignee); take it over with --force (or the Take over button)"
        case .alreadyDecided(let id, let status, let resolution, let by, let at):
            var what = status == .resolved ? "resolved as \(resolution?.rawValue ?? "?")" : "dismissed"
            if let by { what += " by \(by)" }
            if let at { what += " at \(TimeExpression.format(at))" }
            return "review item \(id) is already \(what); a decision is final"
        case .autoResolved(let id):
            return "review item \(id) was auto-resolved: a later run no longer detects the condition, so there is "
                + "nothing left to decide"
        case .actionNotApplicable(let id, let resolution, let reason):
            return "review item \(id) cannot be resolved as \(resolution.rawValue): \(reason)"
        case .invalidInput(let problem):
            return problem
        case .awaitingApproval(let id, let resolution, let by):
            return "review item \(id) waits for approval of \(resolution?.rawValue ?? "a decision") by \(by ?? "someone"): "
                + "another person approves or rejects it first (reconcile review approve|reject \(id))"
        case .ownDecision(let id, let by):
            return "review item \(id) was decided by \(by): the same person cannot approve their own decision; "
                + "another person must"
        case .notAwaitingApproval(let id, let status):
            return "review item \(id) is \(status.rawValue): no decision on it waits for approval"
        case .decisionChanged(let id, let resolution, let by):
            return "review item \(id) now waits for approval of \(resolution.rawValue) by \(by), not the decision "
                + "that was shown: look at it again before approving or rejecting it"
        }
    }
}
