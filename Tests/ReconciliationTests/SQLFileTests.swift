import Foundation
import Postgres
@testable import Reconciliation
import Testing

/// Every statement the product runs lives in a file under `sql/`: each file says what it reads,
/// writes and takes; its `-- Values:` header is its text's; a file is run with exactly its values;
/// and no Swift string outside `Sources/Postgres` spells a statement.
@Suite("SQL files")
struct SQLFileTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func everyFileStartsWithWhatItReadsWritesAndTakes() throws {
        #expect(SQLFile.paths.count > DiffSQL.paths.count, "statement files besides the diff's")
        for path in SQLFile.paths {
            let text = try #require(SQLFile.text(path))
            #expect(text.hasPrefix("-- "), "sql/\(path) does not start with a comment")
            let header = text.split(separator: "\n").prefix { $0.hasPrefix("--") }.joined(separator: "\n")
            for field in ["-- Reads:", "-- Writes:", "-- Values:"] {
                #expect(header.contains(field), "sql/\(path)'s header has no \(field)")
            }
        }
    }

    @Test func theHeaderDeclaresExactlyTheValuesTheTextTakes() throws {
        for path in SQLFile.paths {
            let script = try SQLFile(path).script
            let declared = try #require(script.declaredValues, "sql/\(path) has no -- Values: paragraph")
            #expect(declared == Set(script.valueNames), "sql/\(path): declared \(declared.sorted()), takes \(script.valueNames)")
            if declared.isEmpty {
                #expect(SQLFile.text(path)?.contains("-- Values: none.") == true, "sql/\(path)")
            }
        }
    }

    @Test func filesTakeOnlyTheOperatorsRelations() throws {
        // The diff's relations, and the consent relation of refund answers (RECONCILE_CONSENT_RELATION).
        let known = Set(Differ.Relations.standard.byName.keys).union(["consent"])
        for path in SQLFile.paths {
            for statement in try SQLFile(path).script.statements {
                #expect(statement.relationNames.isSubset(of: known), "sql/\(path)")
            }
        }
    }

    @Test func aFileRunsOnlyWithExactlyItsValues() throws {
        let file: SQLFile = "runs/finished.sql"
        #expect(try file.script.valueNames == ["run_id"])
        #expect(throws: SQLScriptError.self) { try file.bound([:], relations: [:]) }
        #expect(throws: SQLScriptError.self) { try file.bound(["run_id": Int64(1), "runid": Int64(1)], relations: [:]) }
        #expect(throws: SQLScriptError.self) { try file.bound(["run": Int64(1)], relations: [:]) }
        #expect(throws: SQLScriptError.self) {
            try file.bound(["run_id": Int64(1)], relations: ["uploads": Differ.Relations.standard.uploads])
        }
        let bound = try file.bound(["run_id": Int64(7)], relations: [:])
        #expect(bound.count == 1 && bound[0].sql.contains("$1::bigint") && !bound[0].sql.contains(":'run_id'::"))
        #expect(throws: SQLScriptError.self) { try SQLFile("runs/no_such_file.sql").script }
    }

    /// The diff's stages share one set of values across the files of their plan: each scope's
    /// parameters give exactly the values the files its plan may run take (the one its condition
    /// leaves out, `ledger_changes_after`, only with its condition), a value none of them takes is
    /// refused as a single file's would be, and a statement's missing value names its file.
    @Test func theDiffsPlanIsGivenExactlyTheValuesItsFilesTake() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let scopes: [DiffScope] = [
            .window(since: now - 86_400, until: now), .wholeHistory(until: now), .transactions(["1000000001"]),
        ]
        for scope in scopes {
            for changes in [nil, "10:10:"] as [String?] {
                let parameters = Differ.Parameters(
                    runID: 7, bundleIDs: ["com.example"], environment: .production, judgeBefore: now, scope: scope,
                    serverAPIEnabled: true, ledgerChangesAfter: changes)
                let files = DiffPlan.files(DiffPlan.Scope(scope)).map { SQLFile("diff/" + $0) }
                var taken: Set<String> = []
                for file in files { taken.formUnion(try file.script.valueNames) }
                var wanted = taken
                if changes == nil || DiffPlan.Scope(scope) != .window { wanted.remove("ledger_changes_after") }
                #expect(Set(parameters.values.keys) == wanted, "\(scope), ledger changes \(changes ?? "none")")
                try SQLFile.refuseLeftOver(parameters.values, in: files)
                var extra = parameters.values
                extra["judge_befor"] = now
                #expect(throws: SQLScriptError.self) { try SQLFile.refuseLeftOver(extra, in: files) }
            }
        }
        let file = SQLFile("diff/90_picture.sql")
        let missing = #expect(throws: SQLScriptError.self) {
            try file.bound(sharing: ["judge_before": now], relations: Differ.Relations.standard.byName)
        }
        #expect(missing?.problem == "sql/diff/90_picture.sql takes :'api_stores', which was not given")
    }

    /// Every file outside `sql/diff/` is named by the Swift that runs it, and every name is a file.
    @Test func everyStatementFileIsRunAndEveryNameIsAFile() throws {
        let named = Set(try Self.swiftFiles(under: "Sources").flatMap { file in
            Self.stringLiterals(in: try String(contentsOf: file, encoding: .utf8))
                .filter { $0.hasSuffix(".sql") && $0.contains("/") && !$0.contains(" ") && !$0.contains("\\(") }
        })
        let files = Set(SQLFile.paths.filter { !$0.hasPrefix("diff/") })
        #expect(files.subtracting(named).sorted() == [], "files no Swift runs")
        // The diff's runner names its files relative to sql/diff/.
        let all = Set(SQLFile.paths)
        #expect(named.filter { !all.contains($0) && !all.contains("diff/" + $0) }.sorted() == [], "names without a file")
    }

    @Test func noSwiftStringSpellsAStatementOutsideThePostgresModule() throws {
        var spelling: [String: String] = [:]
        for file in try Self.swiftFiles(under: "Sources") {
            let relative = String(file.path.dropFirst(Self.root.path.count).drop { $0 == "/" })
            guard !relative.hasPrefix("Sources/Postgres/") else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            if let statement = Self.stringLiterals(in: text).first(where: Self.spellsAStatement) {
                spelling[relative] = String(statement.prefix(60))
            }
        }
        for (file, statement) in spelling.sorted(by: { $0.key < $1.key }) {
            Issue.record("\(file) spells a statement in Swift: \(statement)…")
        }
    }

    @Test func theStatementDetectorSeesStatementsAndNotProse() {
        #expect(Self.spellsAStatement("SELECT 1"))
        #expect(Self.spellsAStatement("\n  UPDATE reconcile.runs SET x = 1"))
        #expect(Self.spellsAStatement("WITH a AS (SELECT 1) SELECT * FROM a"))
        #expect(Self.spellsAStatement("SET LOCAL statement_timeout = 0"))
        #expect(!Self.spellsAStatement("select a product"))
        #expect(!Self.spellsAStatement("the run was updated"))
        #expect(Self.stringLiterals(in: #"let a = "SELECT \(x) FROM t"; let b = "x""#) == ["SELECT \\(x) FROM t", "x"])
        #expect(Self.stringLiterals(in: "let a = \"\"\"\n    DELETE FROM t\n    \"\"\"\n") == ["    DELETE FROM t\n    "])
    }

    static let statementStarts = [
        "SELECT ", "INSERT INTO ", "UPDATE ", "DELETE FROM ", "WITH ", "CREATE ", "DROP ", "ALTER ", "TRUNCATE ",
        "LOCK TABLE ", "COPY ", "SET ", "ANALYZE", "NOTIFY ", "LISTEN ", "VACUUM", "EXPLAIN ", "DO ",
    ]

    static func spellsAStatement(_ literal: String) -> Bool {
        let text = literal.drop { $0 == " " || $0 == "\n" || $0 == "(" }
        return statementStarts.contains { text.hasPrefix($0) }
    }

    /// The contents of the string literals of Swift source, roughly: `"…"` with its escapes, and
    /// `"""…"""` blocks (raw strings `#"…"#` are read as plain ones).
    static func stringLiterals(in source: String) -> [String] {
        var literals: [String] = []
        var rest = Substring(source)
        while let quote = rest.firstIndex(of: "\"") {
            if rest[quote...].hasPrefix("\"\"\"") {
                let body = rest[rest.index(quote, offsetBy: 3)...].drop { $0 != "\n" }.dropFirst()
                guard let end = body.range(of: "\"\"\"") else { break }
                literals.append(String(body[..<end.lowerBound]))
                rest = body[end.upperBound...]
                continue
            }
            var index = rest.index(after: quote)
            var literal = ""
            while index < rest.endIndex, rest[index] != "\"", rest[index] != "\n" {
                if rest[index] == "\\", rest.index(after: index) < rest.endIndex {
                    literal.append(rest[index])
                    index = rest.index(after: index)
                }
                literal.append(rest[index])
                index = rest.index(after: index)
            }
            literals.append(literal)
            rest = index < rest.endIndex ? rest[rest.index(after: index)...] : ""
        }
        return literals
    }

    static func swiftFiles(under folder: String) throws -> [URL] {
        let base = root.appending(path: folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }
}
