import Postgres
import TestSupport
import Testing

@Suite("Migrator")
struct MigratorTests {
    let database: TestDatabase
    let migrator = Migrator(schema: "app", lockKey: 0x7e57_0002)

    init() throws {
        database = try TestDatabase.create("pg_migrator")
    }

    func migrations(_ second: String = "ALTER TABLE app.items ADD COLUMN note text;") throws -> [Migration] {
        [
            try Migration(fileName: "0001_items.sql", sql: "CREATE TABLE app.items (id bigint PRIMARY KEY);"),
            try Migration(fileName: "0002_note.sql", sql: second),
        ]
    }

    @Test func appliesInOrderThenIsANoOp() throws {
        let connection = try database.connect()
        let first = try migrator.apply(migrations().reversed(), on: connection)
        #expect(first.applied == ["0001_items.sql", "0002_note.sql"])
        let second = try migrator.apply(migrations(), on: connection)
        #expect(second.applied.isEmpty)
        #expect(second.alreadyApplied == ["0001_items.sql", "0002_note.sql"])
        let recorded = try connection.query("SELECT version, checksum FROM app.schema_migrations ORDER BY version")
        #expect(try recorded.map { try $0.decode(Int.self, at: 0) } == [1, 2])
        #expect(try recorded.allSatisfy { try $0.decode(String.self, at: 1).count == 64 })
    }

    @Test func refusesAnAppliedFileThatWasEdited() throws {
        let connection = try database.connect()
        _ = try migrator.apply(migrations(), on: connection)
        let error = try #require(throws: MigrationError.self) {
            try migrator.apply(migrations("ALTER TABLE app.items ADD COLUMN note varchar(10);"), on: connection)
        }
        guard case .editedAfterApply(let version, let name, _, _) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(version == 2 && name == "0002_note.sql")
        #expect(error.description.contains("was edited after it was applied"))
    }

    @Test func aFailingMigrationLeavesNothingBehind() throws {
        let connection = try database.connect()
        let broken = try migrations("ALTER TABLE app.items ADD COLUMN note text; SELECT 1/0;")
        #expect(throws: PostgresError.self) { try migrator.apply(broken, on: connection) }
        let versions = try connection.query("SELECT version FROM app.schema_migrations").map { try $0.decode(Int.self, at: 0) }
        #expect(versions == [1])
        let columns = try connection.query(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'app' AND column_name = 'note'")
        #expect(try columns[0].decode(Int.self, at: 0) == 0)
    }

    @Test func refusesADatabaseNewerThanTheBuild() throws {
        let connection = try database.connect()
        _ = try migrator.apply(migrations(), on: connection)
        #expect(throws: MigrationError.unknownApplied(version: 2, name: "0002_note.sql")) {
            try migrator.apply(Array(migrations().prefix(1)), on: connection)
        }
    }

    @Test func twoConcurrentMigratorsApplyEachFileOnce() async throws {
        let url = database.url
        let all = try migrations()
        let outcomes = try await withThrowingTaskGroup(of: Migrator.Outcome.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    let connection = try Connection(url: url)
                    return try Migrator(schema: "app", lockKey: 0x7e57_0002).apply(all, on: connection)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.flatMap(\.applied).sorted() == ["0001_items.sql", "0002_note.sql"])
    }

    @Test(arguments: ["items.sql", "0001_items.txt", "_0001.sql"])
    func rejectsBadFileNames(_ name: String) {
        #expect(throws: MigrationError.badFileName(name)) { try Migration(fileName: name, sql: "") }
    }
}
