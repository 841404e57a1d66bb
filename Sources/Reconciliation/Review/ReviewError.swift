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
    /// Judged again at the moment of the decision, the item's finding no longer holds (`now` says
    /// what is true now): nothing was queued, and the item is auto-resolved.
    case findingGone(id: Int64, resolution: Resolution, now: String)
    /// The rules cannot judge the item again now (an upload still being verified, a setting
    /// missing): nothing changed; decide it later.
    case notJudgedNow(id: Int64, reason: String)
    /// The resolution is not one the item's kind allows (`granted` on a `duplicate_delivery`).
    case resolutionNotAllowed(id: Int64, kind: FindingKind, resolution: Resolution, allowed: [Resolution])
    /// The action a page showed (`was`) is not what the decision would make the app do now: nothing
    /// changed; look at the item again.
    case actionChanged(id: Int64, was: String, now: String)
    /// An approval found that the decision waiting would now make the app do something else than
    /// its decider was shown (`was`): nothing took effect, and the item is open again.
    case approvalOutdated(id: Int64, was: String, now: String)

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
        case .findingGone(let id, let resolution, let now):
            return "review item \(id) was not resolved as \(resolution.rawValue): \(now). Nothing was queued for the "
                + "app, and the item is auto-resolved"
        case .notJudgedNow(let id, let reason):
            return "review item \(id) cannot be decided now: \(reason); nothing changed"
        case .resolutionNotAllowed(let id, let kind, let resolution, let allowed):
            return "review item \(id) is a \(kind): it cannot be resolved as \(resolution.rawValue); "
                + "it can be resolved as \(allowed.map(\.rawValue).joined(separator: ", ")), or dismissed"
        case .actionChanged(let id, let was, let now):
            return "review item \(id) changed since it was shown: deciding it now would \(now), not \(was); "
                + "nothing changed, look at it again"
        case .approvalOutdated(let id, let was, let now):
            return "review item \(id) was not approved: what the decision would make the app do changed since it "
                + "was decided (was \(was), now \(now)); nothing was queued, and the item is open again for a "
                + "new decision"
        }
    }
}
