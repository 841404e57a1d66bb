import Foundation
import Postgres
import Synchronization

/// What the test process leaves behind, removed when it exits: a folder of its own under the
/// system's temporary folder (every test's scratch files, reports, simulator state and logs go
/// there), and every database ``TestDatabase`` created on the shared cluster. A full run once left
/// thousands of folders in /tmp (12 GB, a full disk) and a database per test.
///
/// The hook runs at a normal exit (`exit`, the end of `swift test`'s runner); a crashed or killed
/// process leaves its folder and databases, named so that they are recognisable
/// (`iap-reconcile-tests.<pid>`).
///
/// The hook opens no connection: by the time `atexit` handlers run, OpenSSL's own exit handler
/// has freed its locks, and a libpq connect over TCP (which tries TLS, `sslmode=prefer`) crashed
/// the test process on a null lock after every test had passed (CI, signal 11 in
/// `PQconnectdbParams` under `Scratch.cleanUp`). The drops go through one connection per server,
/// opened while the process runs, with TLS and GSS encryption off so that a statement at exit
/// touches nothing but its socket; it is never closed (the process is ending).
public enum Scratch {
    /// This process's scratch folder, created on first use.
    public static var root: URL { state.root }

    /// A new empty folder under ``root`` named after `label`.
    public static func folder(_ label: String) -> URL {
        let folder = root.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A path under ``root`` for a file named after `label` (not created).
    public static func file(_ label: String) -> URL {
        root.appendingPathComponent("\(UUID().uuidString.prefix(8))-\(label)")
    }

    /// Notes a database to drop at exit.
    static func created(database: String, on serverURL: String) {
        state.databases.withLock { $0.append((serverURL, database)) }
        state.admins.withLock { admins in
            guard admins[serverURL] == nil,
                  let admin = try? Connection(url: plainSocket(serverURL))
            else { return }
            admins[serverURL] = admin
        }
    }

    /// `serverURL` with TLS and GSS encryption turned off (URI or conninfo form).
    public static func plainSocket(_ serverURL: String) -> String {
        let options = ["sslmode=disable", "gssencmode=disable"]
        if serverURL.hasPrefix("postgres://") || serverURL.hasPrefix("postgresql://") {
            return serverURL + (serverURL.contains("?") ? "&" : "?") + options.joined(separator: "&")
        }
        return ([serverURL] + options).joined(separator: " ")
    }

    private final class State: Sendable {
        let root: URL
        let databases = Mutex<[(server: String, name: String)]>([])
        /// One open connection per server, for the drops at exit (never closed).
        let admins = Mutex<[String: Connection]>([:])

        init() {
            root = FileManager.default.temporaryDirectory
                .appendingPathComponent("iap-reconcile-tests.\(getpid())", isDirectory: true)
            try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            atexit { Scratch.cleanUp() }
        }
    }

    private static let state = State()

    private static func cleanUp() {
        let databases = state.databases.withLock { list in
            defer { list.removeAll() }
            return list
        }
        state.admins.withLock { admins in
            for (server, name) in databases {
                guard let admin = admins[server] else { continue }
                _ = try? admin.execute("DROP DATABASE IF EXISTS \(Identifier.quote(name)) WITH (FORCE)")
            }
        }
        try? FileManager.default.removeItem(at: state.root)
    }
}
