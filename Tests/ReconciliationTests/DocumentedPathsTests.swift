import Foundation
import Testing

/// The documents name files by path (`Sources/Reconciliation/Diff/Differ.swift`,
/// `sql/diff/scope/window.sql`, links such as `../migrations/0014_nightly_equals_history.sql`):
/// every one must exist, so that a file moved or renamed takes its documents with it.
@Suite("Documented paths")
struct DocumentedPathsTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let documents = ["README.md", "docs/architecture.md", "docs/operations.md", "docs/benchmarks.md", "docs/multi-night-test.md"]

    @Test(arguments: documents)
    func everyPathADocumentNamesExists(document: String) throws {
        let text = try String(contentsOf: Self.root.appending(path: document), encoding: .utf8)
        let pattern = try Regex(#"(?:\.\./)?((?:Sources|Tests|sql|migrations|scripts|docs)/[A-Za-z0-9_./+-]*[A-Za-z0-9_+-])"#)
        var missing: [String] = []
        for match in text.matches(of: pattern) {
            guard let path = match.output[1].substring.map(String.init) else { continue }
            // A placeholder (`findings/<kind>.sql`) or a migration named by number (`migrations/0014`).
            let end = match.range.upperBound
            if end < text.endIndex, text[end] == "<" { continue }
            if path.range(of: #"^migrations/\d{4}$"#, options: .regularExpression) != nil {
                let number = path.dropFirst("migrations/".count)
                let names = try FileManager.default.contentsOfDirectory(atPath: Self.root.appending(path: "migrations").path)
                if names.contains(where: { $0.hasPrefix(number + "_") }) { continue }
            }
            if !FileManager.default.fileExists(atPath: Self.root.appending(path: path).path) { missing.append(path) }
        }
        #expect(missing == [], "\(document) names files that do not exist")
    }
}
