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
    private static func pg(_ arguments: [String]) throws -> String {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/pg")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaints = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSetupError(
                "scripts/pg \(arguments.joined(separator: " ")) failed: \(String(decoding: complaints, as: UTF8.self))")
        }
        return String(decoding: printed, as: UTF8.self)
    }
}
