/// A table or view name, `table` or `schema.table`, validated and quoted: the only kind of text
/// ever substituted into SQL (values are always bound). Built from configuration such as
/// `RECONCILE_UPLOADS_RELATION`; an invalid name never becomes a value of this type.
public struct QualifiedRelation: Sendable, Hashable, CustomStringConvertible {
    /// The quoted form, ready to stand where SQL expects a relation: `"app"."deliveries"`.
    public let sql: String

    /// Parses `table` or `schema.table` (each part a plain identifier, folded to lower case as
    /// PostgreSQL does, or a double-quoted one); nil when the text is not a relation name.
    public init?(_ text: String) {
        guard let quoted = Identifier.qualifiedRelation(text) else { return nil }
        sql = quoted
    }

    public var description: String { sql }
}
