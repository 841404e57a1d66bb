import Foundation
import Postgres
import Reconciliation

/// A fresh, empty database on the throwaway cluster that `scripts/test` starts, dropped when the
/// test process exits (``Scratch``).
///
/// Integration tests never skip themselves: without `DATABASE_URL` they fail and say how to run
/// them, so that CI cannot go green without having talked to PostgreSQL.
public struct TestDatabase: Sendable {
    /// The cluster's own URL (from `scripts/test`).
    public let serverURL: String
    /// The URL of the fresh database.
    public let url: String
    /// The fresh database's name.
    public let name: String

    /// Creates a database named after `prefix` and a random suffix.
    public static func create(_ prefix: String) throws -> TestDatabase {
        guard let serverURL = ProcessInfo.processInfo.environment["DATABASE_URL"], !serverURL.isEmpty else {
            throw TestSetupError(
                "DATABASE_URL is not set: integration tests need PostgreSQL; run them with scripts/test")
        }
        let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
            .lowercased().replacingOccurrences(of: "-", with: "_")
        let admin = try Connection(url: serverURL)
        try admin.execute("CREATE DATABASE \(Identifier.quote(name))")
        Scratch.created(database: name, on: serverURL)
        return TestDatabase(serverURL: serverURL, url: TestDatabase.url(serverURL, database: name), name: name)
    }

    /// A fresh database with the job's schema (every migration applied), and a connection to it.
    public static func migrated(_ prefix: String) throws -> (TestDatabase, Connection) {
        let database = try create(prefix)
        let connection = try database.connect()
        _ = try Schema.migrate(connection)
        return (database, connection)
    }

    /// A new connection to the fresh database.
    public func connect() throws -> Connection {
        try Connection(url: url)
    }

    /// `serverURL` pointed at another database (URI or conninfo form).
    public static func url(_ serverURL: String, database: String) -> String {
        if serverURL.hasPrefix("postgres://") || serverURL.hasPrefix("postgresql://") {
            var components = URLComponents(string: serverURL)!
            components.path = "/" + database
            return components.string!
        }
        return serverURL + " dbname=\(database)"
    }
}

/// The test environment is not set up.
public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Resident memory of this process now, in bytes (Linux `/proc/self/statm`).
public func residentMemoryBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
