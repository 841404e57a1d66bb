import Postgres

/// The job's database schema: the migrations in `migrations/`, embedded at build time.
public enum Schema {
    /// The schema every object lives in.
    public static let name = "reconcile"

    /// Advisory lock keys, one per purpose, so that locks of this job never collide with each other.
    public enum LockKey {
        /// Held while `migrate` runs.
        public static let migrate: Int64 = 0x6961_7072_6563_0001
        /// Held by the one reconciliation run allowed per database.
        public static let run: Int64 = 0x6961_7072_6563_0002
        /// Held by a nightly run while it waits for the run lock (``ReconciliationJob``): a receiver
        /// pass that finds it held does not take the run lock, so a nightly run started while
        /// notifications keep arriving gets it after at most the one judgement in progress.
        public static let runWanted: Int64 = 0x6961_7072_6563_0032
        /// The first key of the two-key advisory locks (a space apart from the one-key locks above)
        /// each policy rule takes while it decides (`sql/policy/lock_rule.sql`); the second is its
        /// actor's hash.
        public static let policyClass: Int32 = 0x6961_7001
    }

    /// Every migration shipped with this build, in version order.
    public static func migrations() throws -> [Migration] {
        try EmbeddedFiles.paths(under: "migrations").map { path in
            let fileName = String(path.dropFirst("migrations/".count))
            return try Migration(fileName: fileName, sql: String(decoding: EmbeddedFiles.data(path)!, as: UTF8.self))
        }.sorted { $0.version < $1.version }
    }

    /// The newest migration's version, read from the files' names alone: a run's start need not
    /// copy out the text of every migration to learn it.
    public static var latestVersion: Int {
        EmbeddedFiles.paths(under: "migrations").compactMap {
            Int($0.dropFirst("migrations/".count).prefix(while: \.isNumber))
        }.max() ?? 0
    }

    /// Brings the database schema up to date.
    public static func migrate(_ connection: Connection) throws -> Migrator.Outcome {
        try Migrator(schema: name, lockKey: LockKey.migrate).apply(migrations(), on: connection)
    }
}

extension Schema {
    /// Refuses to work on a database whose schema is older than this build.
    public static func requireUpToDate(_ connection: Connection) throws {
        let latest = latestVersion
        // Two statements: a missing table fails at plan time, even in a branch never taken.
        let exists = try connection.query(SQL.migrationsTableExists)[0].decode(Bool.self, at: 0)
        let applied = exists ? try connection.query(SQL.appliedMigration)[0].decode(Int.self, at: 0) : 0
        guard applied >= latest else {
            throw SchemaOutOfDateError(applied: applied, latest: latest)
        }
    }

    /// The schema's statements (`sql/schema/`); the migrations themselves are `migrations/`.
    enum SQL {
        static let migrationsTableExists: SQLFile = "schema/migrations_table_exists.sql"
        static let appliedMigration: SQLFile = "schema/applied_migration.sql"
    }
}

/// The database schema is older than this build.
public struct SchemaOutOfDateError: Error, CustomStringConvertible {
    /// Newest migration applied.
    public let applied: Int
    /// Newest migration this build has.
    public let latest: Int

    public var description: String {
        "the database schema is at migration \(applied) and this build needs \(latest): run `reconcile migrate` first"
    }
}
