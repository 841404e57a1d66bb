import Foundation
import Postgres

/// A PostgreSQL cluster of one test's own, started with `scripts/pg start` in a new folder on a
/// free port, for tests that restart or stop the server: the shared cluster of `scripts/test`
/// serves every other suite in parallel and must stay up.
public final class PrivateCluster: @unchecked Sendable {
    /// The cluster's folder.
    public let directory: URL
    /// The cluster's own URL (database `postgres`).
    public let url: String

    /// Starts a new cluster (initdb included, a few seconds).
    public init() throws {
        directory = URL(fileURLWithPath: "/tmp/iap-reconcile-private-pg.\(UUID().uuidString.prefix(8))")
        url = try Self.pg(["start", directory.path]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A fresh database on the cluster.
    public func createDatabase(_ prefix: String) throws -> TestDatabase {
        let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
        try Connection(url: url).execute("CREATE DATABASE \(Identifier.quote(name))")
        return TestDatabase(serverURL: url, url: TestDatabase.url(url, database: name), name: name)
    }

    /// `pg_ctl restart -m immediate`: every backend is killed at once, as in a crash, and the
    /// server recovers from its WAL before it accepts connections again.
    public func restartImmediately() throws {
        _ = try Self.pg(["restart", directory.path])
    }

    /// Stops the cluster and removes its folder.
    public func destroy() {
        _ = try? Self.pg(["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { destroy() }

    /// Runs `scripts/pg` and returns what it printed on standard output.
    ///
    /// Spawned directly rather than through Foundation's `Process`, which learns that a child
    /// ended when a socket it hands the child closes: the PostgreSQL server that `pg_ctl`
    /// leaves running would inherit that socket and the call would never return. Every
    /// descriptor but the three standard ones is closed in the child for the same reason.
    private static func pg(_ arguments: [String]) throws -> String {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/pg")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("pg-\(UUID().uuidString).out")
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("pg-\(UUID().uuidString).err")
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let closeInherited = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done"#
            + #" 2>/dev/null; exec /bin/bash "$0" "$@""#
        let argv: [UnsafeMutablePointer<CChar>?] =
            (["/bin/bash", "-c", closeInherited, script.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestSetupError("cannot run scripts/pg: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let printed = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            let complaints = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw TestSetupError("scripts/pg \(arguments.joined(separator: " ")) failed (\(status)): \(complaints)")
        }
        return printed
    }
}
