import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Every number a person sends is bounded where it enters (SPEC section 11): a precise error or
/// exit 64, never an overflow trap.
@Suite("Numbers from a person are bounded")
struct InputBoundsTests {
    @Test(arguments: ["1e300w", "9223372036854775807d", "101000000000s", "1e20", "36500000d"])
    func anEndlessDurationIsRefused(text: String) {
        #expect(TimeExpression.duration(text) == nil)
        #expect(TimeExpression.instant(text, now: Date()) == nil)
    }

    @Test func ordinaryDurationsAndDatesStillParse() {
        #expect(TimeExpression.duration("36h") == 129_600)
        #expect(TimeExpression.duration("90") == 90)
        #expect(TimeExpression.instant("2026-11-01", now: Date()) != nil)
        #expect(TimeExpression.instant("9999-12-31T23:59:59Z", now: Date()) != nil)
    }

    @Test(arguments: [
        ("RECONCILE_CONCURRENCY", "9223372036854775807"), ("RECONCILE_MAX_ATTEMPTS", "1000000"),
        ("RECONCILE_GRACE", "1e300w"), ("RECONCILE_APPLE_TIMEOUT", "1e300s"), ("APPSTORE_API_RATE", "1e-300"),
    ])
    func anEndlessSettingIsRefused(key: String, value: String) {
        let values = ["RECONCILE_BUNDLE_IDS": "com.example.game", key: value]
        #expect(throws: SettingsError.self) { try Settings(lookup: { values[$0] }, requireBundleIDs: true) }
    }

    @Test func aPageBeyondTheLastIsInvalidInputNotATrap() throws {
        let (_, connection) = try TestDatabase.migrated("bounds")
        try ReviewFixtures.seed(on: connection)
        let queue = ReviewQueue(connection: connection)
        #expect(throws: ReviewError.self) { try queue.list(ReviewFilter(), page: Int.max, limit: 500) }
        #expect(throws: ReviewError.self) { try queue.list(ReviewFilter(), page: ReviewQueue.maximumPage + 1) }
        #expect(try queue.list(ReviewFilter(), page: ReviewQueue.maximumPage, limit: 500).items.isEmpty)
    }

    /// The real binary: exit 64 with a message, not a trap.
    @Test(arguments: [
        ["review", "list", "--page", "9223372036854775807"], ["review", "list", "--since", "1e300w"],
        ["review", "list", "--limit", "9223372036854775807"], ["run", "--since", "1e300w"],
        ["review", "show", "99999999999999999999"],
    ])
    func theCLIExits64OnAHugeNumber(arguments: [String]) async throws {
        let (database, _) = try TestDatabase.migrated("bounds_cli")
        let process = try ChildProcess(
            try ChildProcess.executable("reconcile"), arguments: arguments,
            environment: ["DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.example.game"],
            logDirectory: Scratch.root.appendingPathComponent("bounds-cli-\(UUID().uuidString)"),
            label: "cli")
        let status = try await process.waitForExit(timeout: .seconds(60))
        #expect(status == 64, "\(arguments): \(process.output)")
        #expect(!process.standardError.contains("Fatal error"), "\(process.output)")
    }

    /// The filters' codes are parsed as the domain's types: an unknown one is a usage error
    /// naming the known ones; a comma list of known ones filters.
    @Test func theCLIsFilterCodesAreTyped() async throws {
        let (database, connection) = try TestDatabase.migrated("bounds_codes")
        try ReviewFixtures.seed(on: connection)
        func reconcile(_ arguments: [String]) async throws -> (Int32, ChildProcess) {
            let process = try ChildProcess(
                try ChildProcess.executable("reconcile"), arguments: arguments,
                environment: ["DATABASE_URL": database.url],
                logDirectory: Scratch.root.appendingPathComponent("codes-\(UUID().uuidString)"),
                label: "codes")
            return (try await process.waitForExit(timeout: .seconds(60)), process)
        }
        for (option, value, expected) in [
            ("--status", "open,closed", "open, in_review, awaiting_approval, resolved, dismissed, auto_resolved"),
            ("--kind", "missed_delivery,lost", "missed_delivery, duplicate_delivery"),
            ("--severity", "urgent", "high, medium, low"),
        ] {
            let (status, process) = try await reconcile(["review", "list", option, value])
            #expect(status == 64, "\(option) \(value): \(process.output)")
            #expect(process.standardError.contains("expected \(expected)"), "\(process.output)")
        }
        let (status, process) = try await reconcile(["review", "list", "--severity", "high,low", "--format", "json"])
        #expect(status == 0, "\(process.output)")
        let page = try #require(try JSONSerialization.jsonObject(with: Data(process.standardOutput.utf8)) as? [String: Any])
        let items = try #require(page["items"] as? [[String: Any]])
        let severities = Set(items.compactMap { $0["severity"] as? String })
        #expect(!severities.isEmpty && severities.isSubset(of: ["high", "low"]), "\(severities)")
    }

    @Test(arguments: [
        "eve\u{202E}gnp.exe", "a\u{2066}b\u{2069}", "zero\u{200B}width", "\u{600}x", "reconcile", "RECONCILE",
        String(repeating: "e\u{301}", count: 101), "line\u{2028}break",
    ])
    func unsafeNamesAreRefused(name: String) {
        #expect(throws: ReviewError.self) { try ReviewActor.validatedName(name) }
    }

    @Test func ordinaryNamesPass() throws {
        #expect(try ReviewActor.validatedName(" José Müller ") == "José Müller")
        #expect(try ReviewActor.validatedName("王小明") == "王小明")
    }
}
