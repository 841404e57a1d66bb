internal import CLibPQ
import Foundation

/// One PostgreSQL session through libpq.
///
/// Calls block the calling thread until the server answers, as libpq does; use one connection
/// from one task at a time. Every statement with values goes through `PQexecParams`, so values
/// are never spliced into SQL text.
public final class Connection {
    private let handle: OpaquePointer
    private let password: String?
    /// The statements prepared in this session (``queryPrepared(_:_:)``), by their text.
    private var prepared: [String: String] = [:]

    /// Connects with a libpq URI (`postgresql://…`) or conninfo string (`host=… dbname=…`);
    /// nil or empty uses libpq's `PG*` environment variables. Sessions run in UTC with ISO dates.
    public init(url: String?) throws {
        let conninfo = url ?? ""
        // libpq's message for a string it cannot parse echoes the offending part, which may be
        // the password (a raw `%` in a URI's password): such a string is refused unshown.
        guard conninfo.isEmpty || Connection.parses(conninfo) else {
            throw PostgresError(
                kind: .connection,
                message: "the connection string is malformed and is not shown (it may hold a password); "
                    + "percent-encode reserved characters such as % @ : / in a URI's user name and password")
        }
        password = Connection.password(in: conninfo)
        // Defaults come before `dbname`, so the URL's own settings override them.
        let defaults = Connection.defaultOptions
        let keywords = defaults.map(\.keyword) + ["dbname", "fallback_application_name"]
        let values = defaults.map(\.value) + [conninfo, "iap-reconcile"]
        let connection = Connection.withCStrings(keywords) { keywordPointers in
            Connection.withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else {
            throw PostgresError(kind: .connection, message: "libpq could not allocate a connection")
        }
        // Checked before `handle` is set: once every stored property is set, a throwing init
        // runs deinit, which would finish the connection a second time.
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Connection.redact(String(cString: PQerrorMessage(connection)), password: password)
            PQfinish(connection)
            throw PostgresError(kind: .connection, message: "could not connect to PostgreSQL: \(message)")
        }
        handle = connection
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        try execute("SELECT set_config('TimeZone', 'UTC', false), set_config('DateStyle', 'ISO, MDY', false)")
    }

    deinit {
        PQfinish(handle)
    }

    /// The server's version number, e.g. 150018.
    public var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// Connection settings used unless the URL says otherwise. A nightly job must not wait
    /// forever on a server that vanished without closing the connection (a network split, a
    /// host that lost power): TCP keepalives notice it within about two minutes, and connecting
    /// gives up after 15 seconds.
    public static let defaultOptions: [(keyword: String, value: String)] = [
        ("connect_timeout", "15"), ("keepalives", "1"), ("keepalives_idle", "60"),
        ("keepalives_interval", "10"), ("keepalives_count", "6"),
    ]

    /// The value of a connection setting in force (`keepalives_idle`, `sslmode`, …), as libpq
    /// reports it.
    public func option(_ keyword: String) -> String? {
        guard let options = PQconninfo(handle) else { return nil }
        defer { PQconninfoFree(options) }
        var option = options
        while let name = option.pointee.keyword {
            if String(cString: name) == keyword { return option.pointee.val.map { String(cString: $0) } }
            option += 1
        }
        return nil
    }

    /// Whether the connection is still usable.
    public var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Whether a transaction is open (or failed and not yet rolled back) on the connection.
    public var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    // MARK: Statements

    /// Runs a statement and returns all of its rows. Use `stream` for large results.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresEncodable] = []) throws -> [Row] {
        let result = try run(sql, parameters)
        defer { PQclear(result) }
        return Connection.rows(of: result)
    }

    private static func rows(of result: OpaquePointer) -> [Row] {
        let columns = Connection.columns(of: result)
        let rowCount = PQntuples(result)
        var rows: [Row] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            rows.append(Row(columns: columns, fields: Connection.fields(of: result, row: row, count: columns.names.count)))
        }
        return rows
    }

    /// Runs statements in one round trip (libpq's pipeline mode): all are sent, then the server
    /// runs them in order and answers them together. Returns the rows of each. The first failure
    /// is thrown, as `query` throws it; the server skips the statements after it. For many short
    /// statements whose results the caller does not need between them (the diff's stages): each
    /// round trip would otherwise cost more than many of the statements themselves.
    @discardableResult
    public func pipeline(_ statements: [(sql: String, parameters: [any PostgresEncodable])]) throws -> [[Row]] {
        guard !statements.isEmpty else { return [] }
        let values = statements.map { $0.parameters.map(\.postgresText) }
        for (statement, texts) in zip(statements, values) { try Connection.refuseNUL(texts, sql: statement.sql) }
        guard PQenterPipelineMode(handle) == 1 else { throw connectionError(sql: statements[0].sql) }
        defer { PQexitPipelineMode(handle) }
        var sendFailure: PostgresError?
        for (statement, texts) in zip(statements, values) {
            let sent = Connection.withParameters(texts) { count, pointers in
                PQsendQueryParams(handle, statement.sql, count, nil, pointers, nil, nil, 0)
            }
            if sent != 1 {
                sendFailure = connectionError(sql: statement.sql)
                break
            }
        }
        guard PQpipelineSync(handle) == 1 else { throw sendFailure ?? connectionError(sql: statements[0].sql) }
        // Each statement's results end with a null result; the sync's own result ends the pipeline.
        var rows: [[Row]] = Array(repeating: [], count: statements.count)
        var index = 0
        var failure: (any Error)?
        while true {
            guard let result = PQgetResult(handle) else {
                index += 1
                // More ends than statements and no sync: the connection is gone.
                if index > statements.count + 1 || PQstatus(handle) != CONNECTION_OK {
                    throw failure ?? sendFailure ?? connectionError(sql: statements[min(index, statements.count) - 1].sql)
                }
                continue
            }
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC { break }
            if status == PGRES_PIPELINE_ABORTED || failure != nil { continue }
            let at = min(index, statements.count - 1)
            do {
                try check(result, sql: statements[at].sql, values: values[at].compactMap { $0 })
                if status == PGRES_TUPLES_OK { rows[at] = Connection.rows(of: result) }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        if let sendFailure { throw sendFailure }
        return rows
    }

    /// Runs a statement prepared once in this session (`PQprepare`, then `PQexecPrepared`) and
    /// returns all of its rows. For a statement a long-lived session runs for every request (the
    /// notification receiver's): PostgreSQL parses it once instead of every time, and plans it
    /// once when its generic plan costs no more than the custom ones.
    @discardableResult
    public func queryPrepared(_ sql: String, _ parameters: [any PostgresEncodable]) throws -> [Row] {
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "reconcile_\(prepared.count + 1)"
            guard let result = PQprepare(handle, name, sql, 0, nil) else { throw connectionError(sql: sql) }
            defer { PQclear(result) }
            try check(result, sql: sql, values: [])
            prepared[sql] = name
        }
        let result = try run(sql, parameters) { [handle] count, pointers in
            PQexecPrepared(handle, name, count, pointers, nil, nil, 0)
        }
        defer { PQclear(result) }
        return Connection.rows(of: result)
    }

    /// Runs a statement and returns all of its rows (variadic parameters).
    @discardableResult
    public func query(_ sql: String, _ parameters: any PostgresEncodable...) throws -> [Row] {
        try query(sql, parameters)
    }

    /// Runs a statement and returns the first row, if any.
    public func queryFirst(_ sql: String, _ parameters: any PostgresEncodable...) throws -> Row? {
        try query(sql, parameters).first
    }

    /// Runs a statement and returns how many rows it affected.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [any PostgresEncodable] = []) throws -> Int {
        let result = try run(sql, parameters)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Runs a statement and returns how many rows it affected (variadic parameters).
    @discardableResult
    public func execute(_ sql: String, _ parameters: any PostgresEncodable...) throws -> Int {
        try execute(sql, parameters)
    }

    /// Runs trusted, parameterless SQL that may hold several statements (a migration file).
    /// Never pass text that contains outside values: it is not parameterised.
    public func executeScript(_ sql: String) throws {
        guard let result = PQexec(handle, sql) else { throw connectionError(sql: sql) }
        defer { PQclear(result) }
        try check(result, sql: sql, values: [])
    }

    /// Streams a result row by row (libpq single-row mode), so memory stays flat however many
    /// rows come back. Throwing from `body` cancels the query.
    public func stream(
        _ sql: String, _ parameters: [any PostgresEncodable] = [], _ body: (Row) throws -> Void
    ) throws {
        let values = parameters.map(\.postgresText)
        try Connection.refuseNUL(values, sql: sql)
        let sent = Connection.withParameters(values) { count, pointers in
            PQsendQueryParams(handle, sql, count, nil, pointers, nil, nil, 0)
        }
        guard sent == 1 else { throw connectionError(sql: sql) }
        guard PQsetSingleRowMode(handle) == 1 else {
            drain()
            throw PostgresError(kind: .usage, message: "libpq refused single-row mode", sql: sql)
        }
        var columns: Columns?
        var failure: Error?
        while let result = PQgetResult(handle) {
            defer { PQclear(result) }
            guard failure == nil else { continue }
            switch PQresultStatus(result) {
            case PGRES_SINGLE_TUPLE:
                let shared = columns ?? Connection.columns(of: result)
                columns = shared
                do {
                    try body(Row(columns: shared, fields: Connection.fields(of: result, row: 0, count: shared.names.count)))
                } catch {
                    failure = error
                    cancel()
                }
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
                break
            default:
                do { try check(result, sql: sql, values: values.compactMap { $0 }) } catch { failure = error }
            }
        }
        if let failure { throw failure }
    }

    // MARK: Transactions and locks

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    @discardableResult
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs async `body` in a transaction: committed when it returns, rolled back when it throws.
    @discardableResult
    public func transaction<T>(_ body: () async throws -> T) async throws -> T {
        try execute("BEGIN")
        do {
            let value = try await body()
            try execute("COMMIT")
            return value
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// Takes a session-level advisory lock if nobody holds it; returns whether it did.
    public func tryAdvisoryLock(_ key: Int64) throws -> Bool {
        try query("SELECT pg_try_advisory_lock($1::bigint)", [key]).first?.decode(Bool.self, at: 0) ?? false
    }

    /// Waits for a session-level advisory lock.
    public func advisoryLock(_ key: Int64) throws {
        try execute("SELECT pg_advisory_lock($1::bigint)", [key])
    }

    /// Releases a session-level advisory lock taken by this connection.
    @discardableResult
    public func advisoryUnlock(_ key: Int64) throws -> Bool {
        try query("SELECT pg_advisory_unlock($1::bigint)", [key]).first?.decode(Bool.self, at: 0) ?? false
    }

    // MARK: Run-time parameters

    /// Sets a run-time parameter (`set_config`) for the rest of the session, or with `local` until
    /// the current transaction ends, as `SET LOCAL` does.
    public func setParameter(_ name: String, to value: String, local: Bool = false) throws {
        try execute("SELECT set_config($1, $2, $3)", [name, value, local])
    }

    // MARK: COPY

    /// Bulk-loads rows with `COPY … FROM STDIN` (text format). `body` appends rows to the
    /// writer; returns the number of rows the server stored. Throwing from `body` aborts the COPY.
    @discardableResult
    public func copyIn(_ sql: String, _ body: (inout CopyWriter) throws -> Void) throws -> Int {
        let result = try run(sql, [])
        let status = PQresultStatus(result)
        PQclear(result)
        guard status == PGRES_COPY_IN else {
            throw PostgresError(kind: .usage, message: "statement is not COPY … FROM STDIN", sql: sql)
        }
        var writer = CopyWriter { [handle] bytes in
            let sent = bytes.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    PQputCopyData(handle, $0, Int32(buffer.count))
                }
            }
            return sent == 1
        }
        var failure: Error?
        do {
            try body(&writer)
            if try !writer.flush() { failure = connectionError(sql: sql) }
        } catch {
            failure = error
        }
        let ended = failure == nil ? PQputCopyEnd(handle, nil) : PQputCopyEnd(handle, "aborted by the client")
        if ended != 1, failure == nil { failure = connectionError(sql: sql) }
        var stored = 0
        while let result = PQgetResult(handle) {
            defer { PQclear(result) }
            if failure == nil {
                do {
                    try check(result, sql: sql, values: [])
                    stored = Int(String(cString: PQcmdTuples(result))) ?? 0
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
        return stored
    }

    // MARK: libpq plumbing

    private func run(
        _ sql: String, _ parameters: [any PostgresEncodable],
        _ send: ((Int32, UnsafePointer<UnsafePointer<CChar>?>?) -> OpaquePointer?)? = nil
    ) throws -> OpaquePointer {
        let values = parameters.map(\.postgresText)
        try Connection.refuseNUL(values, sql: sql)
        let result = Connection.withParameters(values) { count, pointers in
            if let send { return send(count, pointers) }
            return PQexecParams(handle, sql, count, nil, pointers, nil, nil, 0)
        }
        guard let result else { throw connectionError(sql: sql) }
        do {
            try check(result, sql: sql, values: values.compactMap { $0 })
        } catch {
            PQclear(result)
            throw error
        }
        return result
    }

    private func check(_ result: OpaquePointer, sql: String, values: [String]) throws {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_SINGLE_TUPLE, PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_EMPTY_QUERY:
            return
        default:
            func field(_ code: Int32) -> String? {
                guard let pointer = PQresultErrorField(result, code) else { return nil }
                return String(cString: pointer)
            }
            let primary = field(Int32(UInt8(ascii: "M"))) ?? String(cString: PQresultErrorMessage(result))
            let sqlState = field(Int32(UInt8(ascii: "C")))
            let broken = PQstatus(handle) != CONNECTION_OK
            throw PostgresError(
                kind: broken ? .connection : .server,
                sqlState: sqlState,
                message: Connection.redact(
                    PostgresError.redact(primary.trimmingCharacters(in: .whitespacesAndNewlines), values: values),
                    password: password),
                detail: field(Int32(UInt8(ascii: "D"))),
                hint: field(Int32(UInt8(ascii: "H"))),
                sql: sql)
        }
    }

    private func connectionError(sql: String?) -> PostgresError {
        let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
        return PostgresError(
            kind: .connection, message: Connection.redact(message.isEmpty ? "connection lost" : message, password: password),
            sql: sql)
    }

    private func cancel() {
        guard let cancel = PQgetCancel(handle) else { return }
        var buffer = [CChar](repeating: 0, count: 256)
        _ = PQcancel(cancel, &buffer, Int32(buffer.count))
        PQfreeCancel(cancel)
    }

    private func drain() {
        while let result = PQgetResult(handle) { PQclear(result) }
    }

    private static func columns(of result: OpaquePointer) -> Columns {
        let count = PQnfields(result)
        var names: [String] = []
        var types: [UInt32] = []
        for column in 0..<count {
            names.append(String(cString: PQfname(result, column)))
            types.append(UInt32(PQftype(result, column)))
        }
        return Columns(names: names, types: types)
    }

    private static func fields(of result: OpaquePointer, row: Int32, count: Int) -> [String?] {
        var fields: [String?] = []
        fields.reserveCapacity(count)
        for column in 0..<Int32(count) {
            if PQgetisnull(result, row, column) == 1 {
                fields.append(nil)
            } else {
                let length = Int(PQgetlength(result, row, column))
                let pointer = UnsafeRawPointer(PQgetvalue(result, row, column)!)
                let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
                fields.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        return fields
    }

    /// libpq takes parameters as C strings and would silently cut a value at its first NUL; the
    /// server refuses NUL in text anyway. Refused here, loudly, naming the parameter, not its value.
    private static func refuseNUL(_ values: [String?], sql: String) throws {
        guard let index = values.firstIndex(where: { $0?.containsNUL == true }) else { return }
        throw PostgresError(
            kind: .usage, sqlState: "22021",
            message: "parameter $\(index + 1) holds a NUL character, which PostgreSQL text cannot store", sql: sql)
    }

    private static func withParameters<R>(
        _ values: [String?], _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?) -> R
    ) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = values.map { $0.map { strdup($0)! } }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) }
        return pointers.withUnsafeBufferPointer { body(Int32(values.count), $0.baseAddress) }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0)! }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    /// The password a conninfo string or URI carries, found with libpq's own parser.
    /// Whether libpq can parse the connection string (its error message is not kept).
    private static func parses(_ conninfo: String) -> Bool {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            if let error { PQfreemem(error) }
            return false
        }
        PQconninfoFree(options)
        return true
    }

    private static func password(in conninfo: String) -> String? {
        guard !conninfo.isEmpty, let options = PQconninfoParse(conninfo, nil) else { return nil }
        defer { PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password", let value = option.pointee.val {
                let password = String(cString: value)
                return password.isEmpty ? nil : password
            }
            option += 1
        }
        return nil
    }

    private static func redact(_ message: String, password: String?) -> String {
        guard let password else { return message.trimmingCharacters(in: .whitespacesAndNewlines) }
        return message.replacingOccurrences(of: password, with: "‹password›")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
