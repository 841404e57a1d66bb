/// A failure talking to PostgreSQL.
///
/// `description` carries the SQLSTATE, the server's message and the SQL text, and never bound
/// parameter values or the password: it is what reaches logs. The server's `detail` (which can
/// quote row values, e.g. "Key (id)=(42) already exists") is kept apart and is not printed.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, broadly.
    public enum Kind: Sendable, Equatable {
        /// Could not connect, or the connection broke.
        case connection
        /// The server rejected a statement.
        case server
        /// A value could not be decoded into the Swift type asked for.
        case decoding
        /// The wrapper was used in a way libpq does not allow.
        case usage
    }

    /// What went wrong, broadly.
    public let kind: Kind
    /// The five-character SQLSTATE code, when the server sent one.
    public let sqlState: String?
    /// The primary message, with bound values and the password redacted.
    public let message: String
    /// The server's detail line; may quote data, so it is not part of `description`.
    public let detail: String?
    /// The server's hint, if any.
    public let hint: String?
    /// The statement that failed, if any.
    public let sql: String?
    /// The file under `sql/` the statement came from (`sql/review/page.sql`), when it came from one.
    public var file: String?

    /// Creates an error.
    public init(
        kind: Kind, sqlState: String? = nil, message: String, detail: String? = nil, hint: String? = nil,
        sql: String? = nil
    ) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.sql = sql
    }

    /// True for SQLSTATE class 08 (connection exception) and for a broken connection.
    public var isConnectionFailure: Bool {
        kind == .connection || (sqlState?.hasPrefix("08") ?? false) || sqlState == "57P01"
    }

    public var description: String {
        var text = ""
        if let sqlState { text += "SQLSTATE \(sqlState): " }
        text += message
        if let hint { text += " (hint: \(hint))" }
        if let file { text += " — in \(file)" }
        if let sql { text += (file == nil ? " — in: " : ": ") + Self.oneLine(sql) }
        return text
    }

    static func oneLine(_ sql: String, limit: Int = 400) -> String {
        let collapsed = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return collapsed.count > limit ? String(collapsed.prefix(limit)) + "…" : collapsed
    }

    /// Replaces every bound value that the server quoted back (`invalid input syntax for type
    /// integer: "…"`) by a placeholder, so values never reach logs through error messages.
    static func redact(_ message: String, values: [String]) -> String {
        var redacted = message
        for value in values where value.count >= 2 {
            redacted = redacted.replacingOccurrences(of: "\"\(value)\"", with: "\"‹redacted›\"")
        }
        return redacted
    }
}
