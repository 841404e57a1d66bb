import Postgres
import Synchronization

/// The values a statement file takes, by the names its `:'name'` placeholders use.
public typealias SQLValues = [String: any PostgresEncodable & Sendable]

/// A statement file under `sql/` (`runs/start.sql`, `diff/30_tx.sql`), embedded at build time like
/// `migrations/` and parsed once. Every statement the product runs lives in one (SPEC section 2's
/// relations reach them only as ``QualifiedRelation``; see ``SQLScript`` for the convention).
///
/// A file is run with exactly the values its statements take: a value missing, misspelled or left
/// over is refused before anything reaches PostgreSQL, and `SQLFileTests` holds every file's
/// `-- Values:` header to its text.
public struct SQLFile: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The path relative to `sql/`.
    public let path: String

    public init(stringLiteral path: String) { self.path = path }

    public init(_ path: String) { self.path = path }

    public var description: String { "sql/\(path)" }

    /// The parsed file.
    public var script: SQLScript {
        get throws(SQLScriptError) {
            guard let script = SQLFile.script(at: path) else { throw SQLScriptError(problem: "no file \(self)") }
            return script
        }
    }

    /// Its statements with `values` and `relations` bound, after checking that they are exactly the
    /// ones the file takes.
    func bound(
        _ values: SQLValues, relations: [String: QualifiedRelation]
    ) throws(SQLScriptError) -> [(sql: String, parameters: [any PostgresEncodable])] {
        let script = try script
        let taken = Set(script.valueNames)
        let given = Set(values.keys)
        if let missing = taken.subtracting(given).sorted().first {
            throw SQLScriptError(problem: "\(self) takes :'\(missing)', which was not given")
        }
        if let extra = given.subtracting(taken).sorted().first {
            throw SQLScriptError(problem: "\(self) does not take :'\(extra)'")
        }
        let relationNames = script.statements.reduce(into: Set<String>()) { $0.formUnion($1.relationNames) }
        if relationNames != Set(relations.keys) {
            throw SQLScriptError(
                problem: "\(self) takes the relations \(relationNames.sorted()), given \(relations.keys.sorted())")
        }
        return try script.statements.map { statement throws(SQLScriptError) in
            try statement.bind(relations: relations, values: values)
        }
    }

    /// The statements `including` picks, bound with values shared by the files of one plan (the
    /// diff's stages, which take one set of values and run a file or skip it by their conditions):
    /// a value a picked statement takes and `values` lacks is refused here; one that no file of the
    /// plan takes, by ``refuseLeftOver(_:in:)`` when the plan starts.
    func bound(
        sharing values: SQLValues, relations: [String: QualifiedRelation],
        including: (SQLScript.Statement) -> Bool = { _ in true }
    ) throws(SQLScriptError) -> [(sql: String, parameters: [any PostgresEncodable])] {
        let statements = try script.statements.filter(including)
        for statement in statements {
            if let missing = statement.valueNames.first(where: { values[$0] == nil }) {
                throw SQLScriptError(problem: "\(self) takes :'\(missing)', which was not given")
            }
        }
        return try statements.map { statement throws(SQLScriptError) in
            try statement.bind(relations: relations, values: values)
        }
    }

    /// Refuses a value of `values` that none of `files` takes: the left-over check of
    /// ``bound(_:relations:)`` for values shared by the files of one plan.
    static func refuseLeftOver(_ values: SQLValues, in files: [SQLFile]) throws(SQLScriptError) {
        var taken: Set<String> = []
        for file in files { taken.formUnion(try file.script.valueNames) }
        if let extra = Set(values.keys).subtracting(taken).sorted().first {
            let names = files.count == 1 ? "\(files[0])" : "any of the \(files.count) files from \(files[0]) on"
            throw SQLScriptError(problem: "\(names) does not take :'\(extra)'")
        }
    }

    /// The files parsed so far, by path relative to `sql/`: each is parsed the first time it runs
    /// (parsing all of them took a few milliseconds of every process's start).
    private static let parsed = Mutex<[String: SQLScript]>([:])

    /// A file by its path relative to `sql/`, parsed; nil when there is none.
    static func script(at path: String) -> SQLScript? {
        if let script = parsed.withLock({ $0[path] }) { return script }
        guard path.hasSuffix(".sql"), let data = EmbeddedFiles.data("sql/" + path) else { return nil }
        do {
            let script = try SQLScript(String(decoding: data, as: UTF8.self))
            parsed.withLock { $0[path] = script }
            return script
        } catch {
            // A malformed file is a build mistake; SQLFileTests parse every file.
            preconditionFailure("sql/\(path): \(error)")
        }
    }

    /// Every file's path relative to `sql/`, sorted.
    static var paths: [String] {
        EmbeddedFiles.paths(under: "sql").filter { $0.hasSuffix(".sql") }.map { String($0.dropFirst("sql/".count)) }
            .sorted()
    }

    /// The text of a file, for tests and docs.
    static func text(_ path: String) -> String? {
        EmbeddedFiles.data("sql/" + path).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension SQLFile {
    /// Runs `body`, a statement of this file: a failure from the server names the file.
    func naming<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as PostgresError {
            error.file = description
            throw error
        }
    }
}

extension Connection {
    /// Runs every statement of a file; returns the rows of the last.
    @discardableResult
    public func query(
        _ file: SQLFile, _ values: SQLValues = [:], relations: [String: QualifiedRelation] = [:]
    ) throws -> [Row] {
        var rows: [Row] = []
        for (sql, parameters) in try file.bound(values, relations: relations) {
            rows = try file.naming { try query(sql, parameters) }
        }
        return rows
    }

    /// Runs a file of one statement prepared once in this session (``Connection/queryPrepared(_:_:)``).
    @discardableResult
    public func queryPrepared(
        _ file: SQLFile, _ values: SQLValues, relations: [String: QualifiedRelation] = [:]
    ) throws -> [Row] {
        let statements = try file.bound(values, relations: relations)
        guard statements.count == 1 else { throw SQLScriptError(problem: "\(file) must hold one statement to prepare") }
        return try file.naming { try queryPrepared(statements[0].sql, statements[0].parameters) }
    }

    /// Runs every statement of a file; returns the first row of the last.
    public func queryFirst(
        _ file: SQLFile, _ values: SQLValues = [:], relations: [String: QualifiedRelation] = [:]
    ) throws -> Row? {
        try query(file, values, relations: relations).first
    }

    /// Runs every statement of a file; returns how many rows the last affected.
    @discardableResult
    public func execute(
        _ file: SQLFile, _ values: SQLValues = [:], relations: [String: QualifiedRelation] = [:]
    ) throws -> Int {
        var affected = 0
        for (sql, parameters) in try file.bound(values, relations: relations) {
            affected = try file.naming { try execute(sql, parameters) }
        }
        return affected
    }

    /// Streams the rows of a file of one statement (see ``Connection/stream(_:_:_:)``).
    public func stream(
        _ file: SQLFile, _ values: SQLValues = [:], relations: [String: QualifiedRelation] = [:],
        _ body: (Row) throws -> Void
    ) throws {
        let statements = try file.bound(values, relations: relations)
        guard statements.count == 1 else { throw SQLScriptError(problem: "\(file) must hold one statement to stream") }
        try file.naming { try stream(statements[0].sql, statements[0].parameters, body) }
    }

    /// Runs a file's one `COPY … FROM STDIN` statement with the rows `body` writes.
    @discardableResult
    public func copyIn(
        _ file: SQLFile, relations: [String: QualifiedRelation] = [:], _ body: (inout CopyWriter) throws -> Void
    ) throws -> Int {
        let statements = try file.bound([:], relations: relations)
        guard statements.count == 1 else { throw SQLScriptError(problem: "\(file) must hold one COPY statement") }
        return try file.naming { try copyIn(statements[0].sql, body) }
    }
}
