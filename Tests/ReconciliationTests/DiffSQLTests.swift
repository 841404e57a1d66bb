import Postgres
@testable import Reconciliation
import Testing

/// The diff's SQL files (`sql/diff/`): each says what it reads and writes, each finding kind has
/// its rule, and each follows the one convention for values and relations.
@Suite("Diff SQL files")
struct DiffSQLTests {
    @Test func everyFileStartsWithItsHeaderComment() throws {
        #expect(DiffSQL.paths.count >= 20)
        for path in DiffSQL.paths {
            let text = try #require(DiffSQL.text(path))
            let header = text.split(separator: "\n", omittingEmptySubsequences: false)
                .prefix { $0.hasPrefix("--") }.joined(separator: "\n")
            #expect(text.hasPrefix("-- "), "\(path) does not start with a comment")
            for field in ["-- Reads:", "-- Writes:", "-- Values:"] {
                #expect(header.contains(field), "\(path)'s header has no \(field)")
            }
        }
    }

    @Test(arguments: FindingKind.allCases)
    func everyFindingKindHasItsRule(_ kind: FindingKind) throws {
        let text = try #require(DiffSQL.text(DiffSQL.rule(kind)), "no sql/diff/findings/\(kind.rawValue).sql")
        #expect(text.hasPrefix("-- Finding: \(kind.rawValue) (\(kind.severity.rawValue), \(kind.suggestedAction))"))
        #expect(text.contains("'\(kind.rawValue)' AS kind"))
        #expect(text.contains("'\(kind.rawValue):' ||"), "the fingerprint starts with the kind")
    }

    @Test func everyFileParsesAndTakesOnlyKnownRelations() throws {
        let relations = Differ.Relations.standard.byName
        for path in DiffSQL.paths {
            let script = try #require(DiffSQL.stages[path])
            #expect(!script.statements.isEmpty, "\(path) has no statement")
            for statement in script.statements {
                #expect(statement.relationNames.isSubset(of: Set(relations.keys)), "\(path)")
            }
        }
    }

    @Test func theHeaderNamesEveryValueTheFileTakes() throws {
        for path in DiffSQL.paths {
            let text = try #require(DiffSQL.text(path))
            let header = text.split(separator: "\n").prefix { $0.hasPrefix("--") }.joined(separator: "\n")
            let names = try #require(DiffSQL.stages[path]).statements.flatMap(\.valueNames)
            for name in names {
                #expect(header.contains(":'\(name)'"), "\(path) takes :'\(name)' without saying so")
            }
            if names.isEmpty { #expect(header.contains("-- Values: none."), "\(path)") }
        }
    }
}

@Suite("SQLScript: psql-style values and relations")
struct SQLScriptTests {
    @Test func valuesAreNumberedByFirstUseAndRelationsSubstituted() throws {
        let script = try SQLScript(
            "SELECT a::text, :'b'::int, :'c'::date, :'b'::int FROM :t WHERE x = 'k:' || y -- :'no'\n")
        let statement = try #require(script.statements.first)
        #expect(statement.valueNames == ["b", "c"])
        let (sql, parameters) = try statement.bind(
            relations: ["t": try #require(QualifiedRelation("app.T"))], values: ["b": 1, "c": "2026-01-01", "z": 3])
        #expect(sql == "SELECT a::text, $1::int, $2::date, $1::int FROM \"app\".\"t\" WHERE x = 'k:' || y -- :'no'\n")
        #expect(parameters.map(\.postgresText) == ["1", "2026-01-01"])
    }

    @Test func statementsSplitOnSemicolonsOutsideLiteralsAndComments() throws {
        let script = try SQLScript("-- header; still a comment\nSELECT ';';\n/* ; */ SELECT \"a;b\";\n-- trailing\n")
        #expect(script.statements.count == 2)
    }

    @Test func aStatementsCommandIsItsFirstKeywordAfterComments() throws {
        let script = try SQLScript("-- a; header\nANALYZE diff_tx;\n/* note */ -- more\n  create index ON t (a);\nSELECT :'v'")
        #expect(script.statements.map(\.command) == ["ANALYZE", "CREATE", "SELECT"])
        #expect(script.statements.map(\.onlyInformsThePlanner) == [true, true, false])
        let unique = try SQLScript("-- keyed\nCREATE UNIQUE INDEX ON t (a); CREATE TEMP TABLE t (a int); ANALYZE")
        #expect(unique.statements.map(\.onlyInformsThePlanner) == [false, false, true])
    }

    @Test(arguments: ["SELECT $1", "SELECT :\"name\"", "SELECT 'open", "SELECT :'1x'"])
    func scriptsOutsideTheConventionAreRefused(_ text: String) {
        #expect(throws: SQLScriptError.self) { try SQLScript(text) }
    }

    @Test func aMissingValueOrRelationIsAnError() throws {
        let statement = try #require(try SQLScript("SELECT :'v' FROM :t").statements.first)
        #expect(throws: SQLScriptError.self) { try statement.bind(relations: [:], values: ["v": 1]) }
        #expect(throws: SQLScriptError.self) {
            try statement.bind(relations: ["t": Differ.Relations.standard.uploads], values: [:])
        }
    }

    /// The judged inputs' digest reads each kind's severity and suggested action: a release that
    /// changes one judges every open item again instead of carrying them over (75_unchanged.sql).
    @Test func theJudgedInputsReadEachKindsSeverityAndAction() {
        let severities = FindingKind.allCases.map { "\"\($0.severity.rawValue)\"" }.joined(separator: ",")
        let actions = FindingKind.allCases.map { "\"\($0.suggestedAction.rawValue)\"" }.joined(separator: ",")
        #expect(Differ.judgedRules.contains("\nseverities={\(severities)}"))
        #expect(Differ.judgedRules.contains("\nsuggested_actions={\(actions)}"))
        #expect(DiffSQL.paths.allSatisfy { Differ.judgedRules.contains($0) })
    }
}
