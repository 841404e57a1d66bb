import Foundation
import Postgres

/// The diff's SQL files (`sql/diff/`, embedded with the rest of `sql/`, see ``SQLFile``).
///
/// Each file is one stage: it starts with a comment saying what it reads, writes and which
/// values it takes, takes values as `:'name'` and relations as `:name` (see ``SQLScript``), and
/// can be pasted into psql after `\set`ting those variables inside `BEGIN` (the temporary tables
/// are emptied at commit). docs/architecture.md shows how to EXPLAIN one.
enum DiffSQL {
    /// The parsed stages by path relative to `sql/diff/` (`30_tx.sql`, `findings/wrong_account.sql`).
    static var stages: [String: SQLScript] {
        Dictionary(uniqueKeysWithValues: paths.compactMap { path in script(path).map { (path, $0) } })
    }

    /// One parsed stage by its path relative to `sql/diff/`.
    static func script(_ path: String) -> SQLScript? { SQLFile.script(at: "diff/" + path) }

    /// The text of one stage file, for tests and docs.
    static func text(_ path: String) -> String? { SQLFile.text("diff/" + path) }

    /// Every stage file's path relative to `sql/diff/`, sorted.
    static var paths: [String] {
        SQLFile.paths.filter { $0.hasPrefix("diff/") }.map { String($0.dropFirst("diff/".count)) }
    }

    /// The rule of one finding kind.
    static func rule(_ kind: FindingKind) -> String { "findings/\(kind.rawValue).sql" }
}
