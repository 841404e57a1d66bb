import Foundation

/// The note a person writes with a decision: the one rule the decisions, the pages and the policy
/// file share, so that a note one accepts never fails in another.
public enum ReviewNote {
    /// Longest note kept; a note is for a sentence or two, not a document.
    public static let maximumLength = 2000

    /// What is wrong with a note, by the one rule the decisions and the pages share.
    public enum Problem: Sendable, Equatable {
        /// None given where the decision needs one (a dismissal, a rejection: say why).
        case required
        /// Longer than ``ReviewNote/maximumLength`` Unicode scalars.
        case tooLong
    }

    /// The note's problem, if any: the pages ask before the decisions do, in the reader's language.
    public static func problem(_ raw: String?, required: Bool) -> Problem? {
        let note = raw?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if note.isEmpty { return required ? .required : nil }
        return note.unicodeScalars.count > maximumLength ? .tooLong : nil
    }

    /// The note trimmed (nil when empty), or `ReviewError.invalidInput` saying what is wrong.
    static func validated(_ raw: String?, required: Bool) throws -> String? {
        switch problem(raw, required: required) {
        case .required: throw ReviewError.invalidInput("a note is required: say why")
        case .tooLong: throw ReviewError.invalidInput("a note is at most \(maximumLength) characters")
        case nil:
            let note = raw?.trimmingCharacters(in: .whitespacesAndNewlines)
            return note?.isEmpty == false ? note : nil
        }
    }
}
