/// SQL kept in files that a person can also run in psql, in one convention:
///
/// - `:'name'` is a value. psql quotes the variable `name` as a literal (`\set name 42`); the
///   runner binds it as a parameter (`$n`, the same number for every use of one name). Write the
///   type next to it (`:'since'::timestamptz`) so that both read it alike.
/// - `:name` is a relation name. psql substitutes the variable as it is
///   (`\set uploads reconcile.receipt_uploads`); the runner substitutes a ``QualifiedRelation``.
///
/// Nothing else is substituted: positional parameters (`$1`) and dollar quoting are refused, so
/// that a file has one way of taking values. A script holds one or more statements separated by
/// `;`; text inside literals, quoted identifiers and comments is left alone, and `::` is a cast.
public struct SQLScript: Sendable {
    /// One statement of a script, parsed.
    public struct Statement: Sendable {
        enum Piece: Sendable {
            case text(String)
            case value(String)
            case relation(String)
        }

        let pieces: [Piece]

        /// The values the statement takes, in order of first use.
        public var valueNames: [String] {
            var seen: [String] = []
            for case .value(let name) in pieces where !seen.contains(name) { seen.append(name) }
            return seen
        }

        /// The statement's first keyword, uppercased (`SELECT`, `ANALYZE`), its leading comments
        /// skipped: what a runner tells the kinds of statement apart by.
        public var command: String { leadingWords(1).first ?? "" }

        /// Whether the statement only tells the planner something: an `ANALYZE`, or an index that
        /// is not unique. Skipping it changes how later statements run, never what they return (a
        /// unique index can refuse a row, or be an `ON CONFLICT` target).
        public var onlyInformsThePlanner: Bool {
            let words = leadingWords(2)
            return words.first == "ANALYZE" || (words == ["CREATE", "INDEX"] && !declaresIfMissing)
        }

        /// Whether the statement declares something only if it is missing (`CREATE TEMP TABLE IF NOT
        /// EXISTS`, `CREATE [UNIQUE] INDEX IF NOT EXISTS`): a runner that knows it exists may skip it.
        public var declaresIfMissing: Bool {
            let words = leadingWords(5)
            return words.starts(with: ["CREATE", "TEMP", "TABLE", "IF"]) || words.starts(with: ["CREATE", "INDEX", "IF"])
                || words.starts(with: ["CREATE", "UNIQUE", "INDEX", "IF"])
        }

        /// The first `count` words of the statement, uppercased, its leading comments skipped.
        private func leadingWords(_ count: Int) -> [String] {
            var text = Substring(pieces.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined())
            var words: [String] = []
            while words.count < count {
                text = text.drop { $0.isWhitespace }
                if text.hasPrefix("--") {
                    text = text.drop { $0 != "\n" }
                } else if text.hasPrefix("/*"), let end = text.range(of: "*/") {
                    text = text[end.upperBound...]
                } else {
                    let word = text.prefix { $0.isLetter }
                    guard !word.isEmpty else { break }
                    words.append(word.uppercased())
                    text = text.dropFirst(word.count)
                }
            }
            return words
        }

        /// The statement as written, its values and relations as `:'name'` and `:name`.
        public var text: String {
            pieces.map { piece in
                switch piece {
                case .text(let text): text
                case .value(let name): ":'\(name)'"
                case .relation(let name): ":\(name)"
                }
            }.joined()
        }

        /// The relation names the statement takes.
        public var relationNames: Set<String> {
            var names: Set<String> = []
            for case .relation(let name) in pieces { names.insert(name) }
            return names
        }

        /// The statement with its relations substituted and its values numbered, and the values
        /// to bind in that order. Throws when the statement names a value or relation not given.
        public func bind(
            relations: [String: QualifiedRelation], values: [String: any PostgresEncodable & Sendable]
        ) throws(SQLScriptError) -> (sql: String, parameters: [any PostgresEncodable]) {
            let names = valueNames
            var sql = ""
            var parameters: [any PostgresEncodable] = []
            for name in names {
                guard let value = values[name] else { throw SQLScriptError(problem: "no value for :'\(name)'") }
                parameters.append(value)
            }
            for piece in pieces {
                switch piece {
                case .text(let text): sql += text
                case .value(let name): sql += "$\(names.firstIndex(of: name)! + 1)"
                case .relation(let name):
                    guard let relation = relations[name] else {
                        throw SQLScriptError(problem: "no relation for :\(name)")
                    }
                    sql += relation.sql
                }
            }
            return (sql, parameters)
        }
    }

    /// The statements, in order; comments and blank text between them are not statements.
    public let statements: [Statement]

    /// The values the script's header declares: every `:'name'` of its `-- Values:` paragraph
    /// (that line and the comment lines after it up to the next `-- Heading:` line or the first
    /// line that is not a comment). Nil when the script has no such paragraph.
    public let declaredValues: Set<String>?

    /// The values the statements take, in order of first use.
    public var valueNames: [String] {
        var seen: [String] = []
        for name in statements.flatMap(\.valueNames) where !seen.contains(name) { seen.append(name) }
        return seen
    }

    /// Parses a script. Throws on `$` outside a literal, on `:"name"`, and on unterminated
    /// literals or comments.
    public init(_ text: String) throws(SQLScriptError) {
        let bytes = Array(text.utf8)
        var statements: [Statement] = []
        var pieces: [Statement.Piece] = []
        var current: [UInt8] = []
        var hasCode = false
        var index = 0

        func flushText() {
            if !current.isEmpty { pieces.append(.text(String(decoding: current, as: UTF8.self))) }
            current = []
        }
        func isNameStart(_ byte: UInt8) -> Bool {
            (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || byte == 0x5f
        }
        func isNamePart(_ byte: UInt8) -> Bool { isNameStart(byte) || (byte >= 0x30 && byte <= 0x39) }
        // Copies a run up to and including `close`, where a doubled `close` is an escaped one.
        func copyQuoted(_ close: UInt8, what: String) throws(SQLScriptError) {
            current.append(bytes[index])
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                current.append(byte)
                index += 1
                if byte == close {
                    if index < bytes.count, bytes[index] == close {
                        current.append(close)
                        index += 1
                    } else {
                        return
                    }
                }
            }
            throw SQLScriptError(problem: "unterminated \(what)")
        }

        while index < bytes.count {
            let byte = bytes[index]
            let next: UInt8? = index + 1 < bytes.count ? bytes[index + 1] : nil
            switch byte {
            case UInt8(ascii: "'"):
                hasCode = true
                try copyQuoted(byte, what: "string literal")
            case UInt8(ascii: "\""):
                hasCode = true
                try copyQuoted(byte, what: "quoted identifier")
            case UInt8(ascii: "-") where next == UInt8(ascii: "-"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") {
                    current.append(bytes[index])
                    index += 1
                }
            case UInt8(ascii: "/") where next == UInt8(ascii: "*"):
                guard let end = (index + 2..<max(index + 2, bytes.count - 1)).first(where: {
                    bytes[$0] == UInt8(ascii: "*") && bytes[$0 + 1] == UInt8(ascii: "/")
                }) else { throw SQLScriptError(problem: "unterminated comment") }
                current += bytes[index..<end + 2]
                index = end + 2
            case UInt8(ascii: "$"):
                throw SQLScriptError(problem: "`$` outside a literal: take values as :'name'")
            case UInt8(ascii: ":") where next == UInt8(ascii: ":"):
                current += [byte, byte]
                index += 2
            case UInt8(ascii: ":") where next == UInt8(ascii: "'"):
                var end = index + 2
                while end < bytes.count, isNamePart(bytes[end]) { end += 1 }
                guard end > index + 2, end < bytes.count, bytes[end] == UInt8(ascii: "'"), isNameStart(bytes[index + 2])
                else { throw SQLScriptError(problem: "`:'` must start a value name such as :'run_id'") }
                flushText()
                pieces.append(.value(String(decoding: bytes[index + 2..<end], as: UTF8.self)))
                hasCode = true
                index = end + 1
            case UInt8(ascii: ":") where next == UInt8(ascii: "\""):
                throw SQLScriptError(problem: "`:\"name\"` is not supported: relations are :name")
            case UInt8(ascii: ":") where next.map(isNameStart) == true:
                var end = index + 1
                while end < bytes.count, isNamePart(bytes[end]) { end += 1 }
                flushText()
                pieces.append(.relation(String(decoding: bytes[index + 1..<end], as: UTF8.self)))
                hasCode = true
                index = end
            case UInt8(ascii: ";"):
                flushText()
                if hasCode { statements.append(Statement(pieces: pieces)) }
                pieces = []
                hasCode = false
                index += 1
            default:
                if !(byte == 0x20 || byte == 0x0a || byte == 0x09 || byte == 0x0d) { hasCode = true }
                current.append(byte)
                index += 1
            }
        }
        flushText()
        if hasCode { statements.append(Statement(pieces: pieces)) }
        self.statements = statements
        self.declaredValues = Self.declaredValues(in: text)
    }

    private static func declaredValues(in text: String) -> Set<String>? {
        var names: Set<String>?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if names == nil {
                if line.hasPrefix("-- Values:") { names = valueNames(in: line) }
                continue
            }
            guard line.hasPrefix("--"), !isHeading(line) else { break }
            names!.formUnion(valueNames(in: line))
        }
        return names
    }

    // `-- Reads:`, `-- Writes:`: a capitalised word (or words) and a colon.
    private static func isHeading(_ line: Substring) -> Bool {
        let rest = line.dropFirst(2).drop { $0 == " " }
        guard let first = rest.first, first.isUppercase, let colon = rest.firstIndex(of: ":") else { return false }
        return rest[..<colon].allSatisfy { $0.isLetter || $0 == " " }
    }

    private static func valueNames(in line: Substring) -> Set<String> {
        var names: Set<String> = []
        var rest = line[...]
        while let start = rest.range(of: ":'") {
            let name = rest[start.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !name.isEmpty, rest[start.upperBound...].dropFirst(name.count).first == "'" { names.insert(String(name)) }
            rest = rest[start.upperBound...]
        }
        return names
    }
}

/// A script that breaks the convention of ``SQLScript``, or a value or relation it needs that
/// was not given: a programming error, reported with what is wrong (never with values).
public struct SQLScriptError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let problem: String

    public init(problem: String) { self.problem = problem }

    public var description: String { "SQL script: \(problem)" }
}

extension Connection {
    /// Runs one statement of a script with its relations and values; returns its rows.
    @discardableResult
    public func query(
        _ statement: SQLScript.Statement, relations: [String: QualifiedRelation],
        values: [String: any PostgresEncodable & Sendable]
    ) throws -> [Row] {
        let (sql, parameters) = try statement.bind(relations: relations, values: values)
        return try query(sql, parameters)
    }
}
