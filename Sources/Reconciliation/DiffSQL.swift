import Foundation
import Postgres

/// The diff's SQL files (`sql/diff/`, embedded at build time like `migrations/`), parsed once.
///
/// Each file is one stage: it starts with a comment saying what it reads, writes and which
/// values it takes, takes values as `:'name'` and relations as `:name` (see ``SQLScript``), and
/// can be pasted into psql after `\set`ting those variables inside `BEGIN` (the temporary tables
/// are dropped at commit). docs/architecture.md shows how to EXPLAIN one.
enum DiffSQL {
    /// The parsed stages by path relative to `sql/diff/` (`30_tx.sql`, `findings/wrong_account.sql`).
    static let stages: [String: SQLScript] = {
        var stages: [String: SQLScript] = [:]
        for path in EmbeddedFiles.paths(under: "diff") {
            guard let data = EmbeddedFiles.data(path) else { continue }
            do {
                stages[String(path.dropFirst("diff/".count))] = try SQLScript(String(decoding: data, as: UTF8.self))
            } catch {
                // A malformed file is a build mistake; DiffSQLTests parse every file.
                preconditionFailure("\(path): \(error)")
            }
        }
        return stages
    }()

    /// The text of one stage file, for tests and docs.
    static func text(_ path: String) -> String? {
        EmbeddedFiles.data("diff/" + path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Every stage file's path relative to `sql/diff/`, sorted.
    static var paths: [String] { EmbeddedFiles.paths(under: "diff").map { String($0.dropFirst("diff/".count)) } }

    /// The rule of one finding kind.
    static func rule(_ kind: FindingKind) -> String { "findings/\(kind.rawValue).sql" }
}
