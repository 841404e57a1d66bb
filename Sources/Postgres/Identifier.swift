/// SQL identifiers (schema, table, column names) that come from configuration.
///
/// Values are always bound as parameters; identifiers cannot be, so those that come from outside
/// (`RECONCILE_UPLOADS_RELATION` and friends) are validated and quoted here.
public enum Identifier {
    /// Quotes one identifier part: `a"b` → `"a""b"`.
    public static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Parses `table` or `schema.table` (each part a plain identifier, or a double-quoted one)
    /// and returns it quoted, or nil when it is not a relation name.
    public static func qualifiedRelation(_ text: String) -> String? {
        var parts: [String] = []
        var current = ""
        var quoted = false
        var wasQuoted = false
        var iterator = Array(text).makeIterator()
        var pending: Character? = iterator.next()
        while let character = pending {
            pending = iterator.next()
            if quoted {
                if character == "\"" {
                    if pending == "\"" {
                        current.append("\"")
                        pending = iterator.next()
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(character)
                }
            } else if character == "\"", current.isEmpty {
                quoted = true
                wasQuoted = true
            } else if character == "." {
                guard !current.isEmpty else { return nil }
                parts.append(current)
                current = ""
                wasQuoted = false
            } else {
                guard !wasQuoted, character == "_" || character.isLetter || (character.isNumber && !current.isEmpty),
                    character.isASCII
                else { return nil }
                current.append(contentsOf: character.lowercased())
            }
        }
        guard !quoted, !current.isEmpty, current.utf8.count <= 63 else { return nil }
        parts.append(current)
        guard parts.count <= 2 else { return nil }
        return parts.map(quote).joined(separator: ".")
    }
}
