import Foundation
import Postgres

/// Who may act: the names the product acts under, and what a person's name may be.
extension ReviewActor {
    /// Longest actor name.
    public static let maximumNameLength = 200
    /// Every name the product acts under, which no person may take (``validatedName(_:)``): the
    /// job's and the receiver's, and every name starting with a policy's prefix
    /// (``PolicyRule/actorPrefix``: `policy:<rule>`). Compared without regard to case, accents or
    /// character width (`Receiver`, `ＲＥＣＯＮＣＩＬＥ`, `Policy：x`), after trimming.
    public static let reservedNames = [jobName, receiverName]
    public static let reservedPrefixes = [policyPrefix]

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
}
