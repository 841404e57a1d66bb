import Foundation
import Postgres

/// Who may act and what they may write: the names the product acts under, a person's name, a note.
extension ReviewService {
    /// The name the job itself records (``ReviewActor/job``); no person may take it.
    public static let jobActor = ReviewActor.job.name
    /// The name the notification receiver records (``ReviewActor/receiver``); no person may take it.
    public static let receiverActor = ReviewActor.receiver.name
    /// Every name the product acts under, which no person may take (``validatedName(_:)``): the
    /// job's and the receiver's, and every name starting with a policy's prefix
    /// (``PolicyRule/actorPrefix``: `policy:<rule>`). Compared without regard to case, accents or
    /// character width (`Receiver`, `ＲＥＣＯＮＣＩＬＥ`, `Policy：x`), after trimming.
    public static let reservedNames = [jobActor, receiverActor]
    public static let reservedPrefixes = [ReviewActor.policyPrefix]

    /// The reserved name or prefix that `name` (trimmed) is, or starts with; nil for a person's name.
    public static func reservation(of name: String) -> String? {
        func folded(_ text: String) -> String {
            text.trimmingCharacters(in: .whitespacesAndNewlines)
                .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        }
        let name = folded(name)
        return reservedNames.first { folded($0) == name } ?? reservedPrefixes.first { name.hasPrefix(folded($0)) }
    }

    /// A trimmed, non-empty actor name, or `ReviewError.invalidInput`: at most
    /// ``maximumNameLength`` Unicode scalars (a cluster of combining marks counts for each of
    /// them), no control or format characters (bidi overrides and isolates, zero-width joiners,
    /// U+0600 prefixes: a name must read as what it is), and none the product acts under
    /// (``reservedNames``, ``reservedPrefixes``).
    public static func validatedName(_ raw: String) throws -> String {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw ReviewError.invalidInput("a name is required (who is deciding?)") }
        guard name.unicodeScalars.count <= maximumNameLength else {
            throw ReviewError.invalidInput("a name is at most \(maximumNameLength) characters")
        }
        guard !name.unicodeScalars.contains(where: {
            let category = $0.properties.generalCategory
            return category == .control || category == .format || category == .lineSeparator
                || category == .paragraphSeparator
        }) else {
            throw ReviewError.invalidInput("a name cannot hold control or invisible formatting characters")
        }
        switch reservation(of: name) {
        case nil: return name
        case let prefix? where reservedPrefixes.contains(prefix):
            throw ReviewError.invalidInput("names starting with \(prefix) are the policies'; use your own name")
        case let reserved?:
            throw ReviewError.invalidInput("\(reserved) is the product's own name (\(reservedNames.joined(separator: ", ")) "
                + "and \(reservedPrefixes.map { $0 + "…" }.joined(separator: ", ")) are reserved); use your own name")
        }
    }

    /// Who decides: a person by a validated name, or a policy rule (SPEC section 17) recorded as
    /// `policy:<name>` with the run whose pass decided, which checks the locked item before
    /// anything is written and throws to leave it as it is (claimed, over a limit).
    struct Decider {
        /// The actor recorded (`resolved_by`, the event, the outbox's `decided_by`).
        let actor: ReviewActor
        /// Its recorded name.
        var name: String { actor.name }
        /// The run recorded with the event; nil for a person.
        var runID: Int64? = nil
        /// Runs on the locked item inside the decision's transaction; nil for a person.
        var admit: ((ReviewItem) throws -> Void)? = nil

        static func person(_ name: String) throws -> Decider { Decider(actor: try .person(validating: name)) }
    }

    /// What is wrong with a note, by the one rule the service and the pages share.
    public enum NoteProblem: Sendable, Equatable {
        /// None given where the decision needs one (a dismissal, a rejection: say why).
        case required
        /// Longer than ``ReviewService/maximumNoteLength`` Unicode scalars.
        case tooLong
    }

    /// The note's problem, if any: the pages ask before the service does, in the reader's language.
    public static func noteProblem(_ raw: String?, required: Bool) -> NoteProblem? {
        let note = raw?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if note.isEmpty { return required ? .required : nil }
        return note.unicodeScalars.count > maximumNoteLength ? .tooLong : nil
    }

    static func note(_ raw: String?, required: Bool) throws -> String? {
        switch noteProblem(raw, required: required) {
        case .required: throw ReviewError.invalidInput("a note is required: say why")
        case .tooLong: throw ReviewError.invalidInput("a note is at most \(maximumNoteLength) characters")
        case nil:
            let note = raw?.trimmingCharacters(in: .whitespacesAndNewlines)
            return note?.isEmpty == false ? note : nil
        }
    }
}
