import Foundation
import Postgres

/// The notification receiver's SQL files (`sql/receiver/`, embedded at build time like
/// `sql/diff/`), parsed once. Each file is one statement that takes values as `:'name'` (see
/// ``SQLScript``); a person can run it in psql after `\set`ting them.
enum ReceiverSQL {
    /// The parsed files by name without `.sql` (`store_notification`).
    static let files: [String: SQLScript] = {
        var files: [String: SQLScript] = [:]
        for path in EmbeddedFiles.paths(under: "receiver") {
            guard let data = EmbeddedFiles.data(path), path.hasSuffix(".sql") else { continue }
            do {
                let name = String(path.dropFirst("receiver/".count).dropLast(".sql".count))
                files[name] = try SQLScript(String(decoding: data, as: UTF8.self))
            } catch {
                // A malformed file is a build mistake; NotificationReceiverTests parse every file.
                preconditionFailure("\(path): \(error)")
            }
        }
        return files
    }()

    /// The text of `sql/receiver/<name>.sql`, for tests and docs.
    static func text(_ name: String) -> String? {
        EmbeddedFiles.data("receiver/\(name).sql").map { String(decoding: $0, as: UTF8.self) }
    }

    /// Runs every statement of `sql/receiver/<name>.sql` with `values`; returns the rows of the last.
    @discardableResult
    static func run(
        _ name: String, _ values: [String: any PostgresEncodable & Sendable], on connection: Connection
    ) throws -> [Row] {
        guard let script = files[name] else { throw SQLScriptError(problem: "no file sql/receiver/\(name).sql") }
        var rows: [Row] = []
        for statement in script.statements {
            rows = try connection.query(statement, relations: [:], values: values)
        }
        return rows
    }
}
