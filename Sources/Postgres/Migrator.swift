/// One forward-only schema migration: a numbered SQL file.
public struct Migration: Sendable, Equatable {
    /// The number the file name starts with (`0001_…` → 1).
    public let version: Int
    /// The file name.
    public let name: String
    /// The file's SQL.
    public let sql: String

    /// Creates a migration from a file name such as `0003_review_queue.sql`.
    public init(fileName: String, sql: String) throws {
        let digits = fileName.prefix(while: \.isNumber)
        guard !digits.isEmpty, let version = Int(digits), fileName.hasSuffix(".sql") else {
            throw MigrationError.badFileName(fileName)
        }
        self.version = version
        self.name = fileName
        self.sql = sql
    }
}

/// Why `migrate` refused to go on.
public enum MigrationError: Error, Equatable, CustomStringConvertible {
    /// A file name that does not start with a number or does not end in `.sql`.
    case badFileName(String)
    /// Two files share a number.
    case duplicateVersion(Int, [String])
    /// A file already applied was changed afterwards.
    case editedAfterApply(version: Int, name: String, appliedChecksum: String, fileChecksum: String)
    /// The database has a migration this build does not know (it is newer than this program).
    case unknownApplied(version: Int, name: String)

    public var description: String {
        switch self {
        case .badFileName(let name):
            "migration file \(name) must be named NNNN_description.sql"
        case .duplicateVersion(let version, let names):
            "migrations \(names.joined(separator: ", ")) share the number \(version)"
        case .editedAfterApply(let version, let name, let applied, let file):
            "migration \(name) (version \(version)) was edited after it was applied "
                + "(applied checksum \(applied.prefix(12))…, file now \(file.prefix(12))…); "
                + "applied migrations are never changed: restore the file and add a new migration instead"
        case .unknownApplied(let version, let name):
            "the database has migration \(name) (version \(version)) that this build does not know; "
                + "run a newer reconcile"
        }
    }
}

/// Applies numbered SQL migrations, each in its own transaction, recording them with a checksum.
///
/// Two `migrate` processes at once are safe: the second waits on an advisory lock and then finds
/// nothing left to do.
public struct Migrator {
    /// Schema that holds the bookkeeping table (created if missing).
    public let schema: String
    /// Bookkeeping table name inside `schema`.
    public let table: String
    /// The advisory lock key that serialises concurrent migrators.
    public let lockKey: Int64

    /// Creates a migrator that records applied files in `schema.table`.
    public init(schema: String, table: String = "schema_migrations", lockKey: Int64) {
        self.schema = schema
        self.table = table
        self.lockKey = lockKey
    }

    /// What one `apply` did.
    public struct Outcome: Sendable, Equatable {
        /// Migrations applied now, in order.
        public var applied: [String]
        /// Migrations that were already applied.
        public var alreadyApplied: [String]
    }

    /// Applies every migration not yet applied, in version order.
    public func apply(_ migrations: [Migration], on connection: Connection) throws -> Outcome {
        let ordered = migrations.sorted { $0.version < $1.version }
        for group in Dictionary(grouping: ordered, by: \.version).values where group.count > 1 {
            throw MigrationError.duplicateVersion(group[0].version, group.map(\.name))
        }
        try connection.advisoryLock(lockKey)
        defer { _ = try? connection.advisoryUnlock(lockKey) }

        let qualified = "\(Identifier.quote(schema)).\(Identifier.quote(table))"
        try connection.executeScript(
            """
            CREATE SCHEMA IF NOT EXISTS \(Identifier.quote(schema));
            CREATE TABLE IF NOT EXISTS \(qualified) (
                version integer PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            );
            """)
        var applied: [Int: (name: String, checksum: String)] = [:]
        for row in try connection.query("SELECT version, name, checksum FROM \(qualified)") {
            applied[try row.decode(Int.self, at: 0)] = (try row.decode(String.self, at: 1), try row.decode(String.self, at: 2))
        }
        let known = Set(ordered.map(\.version))
        if let unknown = applied.keys.sorted().first(where: { !known.contains($0) }) {
            throw MigrationError.unknownApplied(version: unknown, name: applied[unknown]!.name)
        }

        var outcome = Outcome(applied: [], alreadyApplied: [])
        for migration in ordered {
            let checksum = try connection.query(
                "SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')", [migration.sql]
            )[0].decode(String.self, at: 0)
            if let record = applied[migration.version] {
                guard record.checksum == checksum else {
                    throw MigrationError.editedAfterApply(
                        version: migration.version, name: migration.name, appliedChecksum: record.checksum,
                        fileChecksum: checksum)
                }
                outcome.alreadyApplied.append(migration.name)
                continue
            }
            try connection.transaction {
                try connection.executeScript(migration.sql)
                try connection.execute(
                    "INSERT INTO \(qualified) (version, name, checksum) VALUES ($1, $2, $3)",
                    [migration.version, migration.name, checksum])
            }
            outcome.applied.append(migration.name)
        }
        return outcome
    }
}
