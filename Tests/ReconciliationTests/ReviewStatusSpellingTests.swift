import Foundation
@testable import Reconciliation
import Testing

/// The SQL files spell the review statuses they select as literal lists (the planner matches the
/// partial indexes written the same way), so the lists are held here to the Swift definition:
/// every `status IN (…)` or `NOT IN (…)` over review statuses in `sql/` is the undecided set
/// (`ReviewStatus.undecided`) or the takeable one (`ReviewStatus.takeable`), and every name is a
/// `ReviewStatus`.
@Suite("Review statuses as the SQL spells them")
struct ReviewStatusSpellingTests {
    static let named: [Set<String>: String] = [
        Set(ReviewStatus.undecided.map(\.rawValue)): "ReviewStatus.undecided",
        Set(ReviewStatus.takeable.map(\.rawValue)): "ReviewStatus.takeable",
    ]

    @Test func everyStatusListIsOneSwiftNames() throws {
        let known = Set(ReviewStatus.allCases.map(\.rawValue))
        let list = try Regex(#"status\s+(?:NOT\s+)?IN\s*\(([^)]*)\)"#).ignoresCase()
        var checked = 0
        for path in SQLFile.paths {
            let text = try #require(SQLFile.text(path))
            for match in text.matches(of: list) {
                let names = Set(match.output[1].substring!.split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
                })
                // Other tables' statuses (runs, answers) are not the queue's.
                guard names.contains("open") || !names.isDisjoint(with: ["in_review", "awaiting_approval"]) else { continue }
                checked += 1
                #expect(names.isSubset(of: known), "sql/\(path): \(names.subtracting(known)) is no ReviewStatus")
                #expect(Self.named[names] != nil, "sql/\(path) spells \(names.sorted()), which no ReviewStatus list names")
            }
        }
        #expect(checked >= 8, "the lists were not found (\(checked)): the pattern is stale")
    }
}
