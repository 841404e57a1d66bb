import Foundation
import Postgres
import Reconciliation
import TestSupport
import Testing

/// Migrations 0011 and 0013: who carried a transaction and what their claims bound it to, kept on
/// the white row for the whole-history pass, backfilled, kept current by triggers on the claims,
/// and defined once by the view `reconcile.claim_facts`.
@Suite("Migrations 0011, 0013: the claims' facts on the white table")
struct ClaimFactsTests {
    static let tokenA = "6f0d2f4c-0f7a-4a59-9a55-2d1e2f3a4b5c"
    static let tokenB = "7f0d2f4c-0f7a-4a59-9a55-2d1e2f3a4b5c"
    /// SHA-256 of "u1", what the seed apps put in applicationUsername.
    static let hashOfU1 = "bb82030dbc2bcaba32a90bf2e207a84a856fc5f033b77c480836ab6f77f40f19"

    struct Facts: Equatable, CustomStringConvertible {
        var claimedBy: String?
        var token: String?
        var usernamesNameUploader: Bool?
        var description: String { "\(claimedBy ?? "-") \(token ?? "-") \(usernamesNameUploader.map(String.init) ?? "-")" }
    }

    /// (transaction, its claims as (upload, user, applicationUsername, appAccountToken), the facts)
    static let cases: [(String, [(Int, String, String?, String?)], Facts)] = [
        ("t-none", [], Facts()),
        ("t-one", [(1, "u1", nil, nil)], Facts(claimedBy: "u1", usernamesNameUploader: true)),
        ("t-twice", [(1, "u1", nil, nil), (2, "u1", "u1", nil)], Facts(claimedBy: "u1", usernamesNameUploader: true)),
        ("t-shared", [(1, "u1", nil, nil), (2, "u2", nil, nil)], Facts(usernamesNameUploader: true)),
        ("t-token", [(1, "u1", "someone", tokenA)], Facts(claimedBy: "u1", token: tokenA, usernamesNameUploader: true)),
        ("t-tokens", [(1, "u1", nil, tokenA), (2, "u1", nil, tokenB)], Facts(usernamesNameUploader: true)),
        ("t-named", [(1, "u1", hashOfU1, nil)], Facts(claimedBy: "u1", usernamesNameUploader: true)),
        ("t-misnamed", [(1, "u1", "u2", nil), (2, "u1", nil, tokenA)],
         Facts(claimedBy: "u1", token: tokenA, usernamesNameUploader: false)),
    ]

    static func insertTransactions(_ ids: [String], on connection: Connection) throws {
        for id in ids {
            try connection.execute(
                """
                INSERT INTO reconcile.apple_transactions
                    (transaction_id, original_transaction_id, product_id, bundle_id, environment, quantity,
                     purchase_date, source, signed_date)
                VALUES ($1, $1, 'coin42', 'com.hncs.szj', 'Production', 1, now(), 'jws', now())
                """, [id])
        }
    }

    static func insertClaim(
        _ transaction: String, upload: Int, user: String, username: String? = nil, token: String? = nil,
        on connection: Connection
    ) throws {
        try connection.execute(
            """
            INSERT INTO reconcile.transaction_claims
                (transaction_id, upload_id, user_id, application_username, app_account_token, source)
            VALUES ($1, $2, $3, $4, $5::uuid, 'jws')
            """, [transaction, upload, user, username, token])
    }

    static func facts(_ transaction: String, on connection: Connection) throws -> Facts {
        let row = try connection.query(
            """
            SELECT claimed_by, claim_token::text AS claim_token, claim_usernames_name_uploader
              FROM reconcile.apple_transactions WHERE transaction_id = $1
            """, [transaction])[0]
        return Facts(
            claimedBy: try row.decode(String?.self, "claimed_by"), token: try row.decode(String?.self, "claim_token"),
            usernamesNameUploader: try row.decode(Bool?.self, "claim_usernames_name_uploader"))
    }

    @Test func theHashOfTheFixtureIsTheSeedAppsHash() throws {
        let connection = try TestDatabase.create("claim_facts_hash").connect()
        let hash = try connection.query("SELECT encode(sha256(convert_to('u1', 'UTF8')), 'hex')")[0]
            .decode(String.self, at: 0)
        #expect(hash == Self.hashOfU1, "update hashOfU1 to \(hash)")
    }

    @Test func claimsRecordedBeforeTheMigrationAreBackfilled() throws {
        let connection = try TestDatabase.create("claim_facts_backfill").connect()
        _ = try Migrator(schema: Schema.name, lockKey: Schema.LockKey.migrate)
            .apply(try Schema.migrations().filter { $0.version < 11 }, on: connection)
        try Self.insertTransactions(Self.cases.map(\.0), on: connection)
        for (transaction, claims, _) in Self.cases {
            for (upload, user, username, token) in claims {
                try Self.insertClaim(transaction, upload: upload, user: user, username: username, token: token, on: connection)
            }
        }
        _ = try Schema.migrate(connection)
        for (transaction, _, expected) in Self.cases {
            #expect(try Self.facts(transaction, on: connection) == expected, "\(transaction)")
        }
    }

    @Test func claimsWrittenAfterTheMigrationKeepTheFactsCurrent() throws {
        let connection = try TestDatabase.create("claim_facts_upkeep").connect()
        _ = try Schema.migrate(connection)
        try Self.insertTransactions(Self.cases.map(\.0), on: connection)
        // One claim per statement, in order: each transaction's facts follow every claim it gets.
        for (transaction, claims, _) in Self.cases {
            for (upload, user, username, token) in claims {
                try Self.insertClaim(transaction, upload: upload, user: user, username: username, token: token, on: connection)
            }
        }
        for (transaction, _, expected) in Self.cases {
            #expect(try Self.facts(transaction, on: connection) == expected, "\(transaction)")
        }
        #expect(try Self.rowsDifferingFromTheView(on: connection) == 0)

        // A claim by another account, recorded later, makes a plainly carried transaction shared;
        // taking it back (an operator's fix) restores the one uploader; a claim moved to another
        // transaction refreshes both.
        try Self.insertClaim("t-one", upload: 9, user: "u9", on: connection)
        #expect(try Self.facts("t-one", on: connection).claimedBy == nil)
        try connection.execute("DELETE FROM reconcile.transaction_claims WHERE upload_id = 9")
        #expect(try Self.facts("t-one", on: connection).claimedBy == "u1")
        try connection.execute(
            "UPDATE reconcile.transaction_claims SET transaction_id = 't-none' WHERE transaction_id = 't-shared' AND upload_id = 2")
        #expect(try Self.facts("t-shared", on: connection).claimedBy == "u1")
        #expect(try Self.facts("t-none", on: connection).claimedBy == "u2")
        // A transaction whose last claim goes is like one never claimed (migration 0013).
        try connection.execute("DELETE FROM reconcile.transaction_claims WHERE transaction_id = 't-named'")
        #expect(try Self.facts("t-named", on: connection) == Facts())
        #expect(try Self.rowsDifferingFromTheView(on: connection) == 0)

        try connection.execute("TRUNCATE reconcile.transaction_claims")
        let left = try connection.query(
            """
            SELECT count(*) FROM reconcile.apple_transactions
             WHERE claimed_by IS NOT NULL OR claim_token IS NOT NULL OR claim_usernames_name_uploader IS NOT NULL
            """)[0].decode(Int.self, at: 0)
        #expect(left == 0)
    }

    /// White rows whose facts are not the view's (a transaction without claims: all NULL).
    static func rowsDifferingFromTheView(on connection: Connection) throws -> Int {
        try connection.query(
            """
            SELECT count(*) FROM reconcile.apple_transactions a
              LEFT JOIN reconcile.claim_facts f ON f.transaction_id = a.transaction_id
             WHERE (a.claimed_by, a.claim_token, a.claim_usernames_name_uploader)
                   IS DISTINCT FROM (f.claimed_by, f.claim_token, f.claim_usernames_name_uploader)
            """)[0].decode(Int.self, at: 0)
    }

    /// The bench's generator writes the facts with the white rows and checks them against the view;
    /// the claims' trigger, made to recompute every one of them, writes the same facts.
    @Test func theGeneratorsFactsAreTheTriggers() async throws {
        let (database, connection) = try TestDatabase.migrated("claim_facts_bench")
        let work = Scratch.root.appendingPathComponent("claim-facts-\(UUID().uuidString)")
        let sim = work.appendingPathComponent("sim")
        try FileManager.default.createDirectory(at: sim, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let generate = try ChildProcess(
            try ChildProcess.executable("reconcile-bench"),
            arguments: ["generate", "--transactions", "4000", "--sim-state", sim.path],
            environment: ["DATABASE_URL": database.url], logDirectory: work, label: "generate")
        let status = try await generate.waitForExit()
        #expect(status == 0, "\(generate.standardError)")
        try connection.execute(
            """
            CREATE TEMP TABLE generated AS
            SELECT transaction_id, claimed_by, claim_token, claim_usernames_name_uploader FROM reconcile.apple_transactions
            """)
        let counts = try connection.query(
            """
            SELECT count(*), count(claimed_by), count(claim_token) FROM generated
            """)[0]
        #expect(try counts.decode(Int.self, at: 0) > 3000)
        #expect(try counts.decode(Int.self, at: 1) > 0 && counts.decode(Int.self, at: 2) > 0)
        try connection.execute(
            "UPDATE reconcile.apple_transactions SET claimed_by = NULL, claim_token = NULL, claim_usernames_name_uploader = NULL")
        // Every claim touched: the trigger recomputes the facts of every claimed transaction.
        try connection.execute("UPDATE reconcile.transaction_claims SET upload_id = upload_id")
        let differing = try connection.query(
            """
            SELECT count(*) FROM reconcile.apple_transactions a JOIN generated g USING (transaction_id)
             WHERE (a.claimed_by, a.claim_token, a.claim_usernames_name_uploader)
                   IS DISTINCT FROM (g.claimed_by, g.claim_token, g.claim_usernames_name_uploader)
            """)[0].decode(Int.self, at: 0)
        #expect(differing == 0)
    }

    /// Two uploads of one receipt by two accounts, recorded by two overlapping transactions (two
    /// workers): whichever commits last must see the other's claim, or the white row would name
    /// one uploader and the whole-history pass would call a shared receipt clean.
    @Test func overlappingClaimsByTwoAccountsLeaveNoSingleUploader() throws {
        let database = try TestDatabase.create("claim_facts_race")
        let first = try database.connect()
        _ = try Schema.migrate(first)
        try Self.insertTransactions(["t-race"], on: first)
        let observer = try database.connect()

        try first.execute("BEGIN")
        try Self.insertClaim("t-race", upload: 1, user: "u1", on: first)
        let url = database.url
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        let second = Thread {
            do {
                let connection = try Connection(url: url)
                try connection.transaction {
                    try Self.insertClaim("t-race", upload: 2, user: "u2", on: connection)
                }
            } catch {
                outcome.record(error)
            }
            done.signal()
        }
        second.start()
        // The second waits for the first's lock on the white row.
        var waiting = false
        for _ in 0..<200 where !waiting {
            waiting = try observer.query(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )[0].decode(Int.self, at: 0) > 0
            if !waiting { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(waiting, "the second claim did not wait for the first")
        try first.execute("COMMIT")
        done.wait()
        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(try Self.facts("t-race", on: observer) == Facts(usernamesNameUploader: true))
    }

    /// The second thread's error, if any.
    final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: (any Error)?
        var error: (any Error)? { lock.withLock { stored } }
        func record(_ error: any Error) { lock.withLock { stored = error } }
    }
}
