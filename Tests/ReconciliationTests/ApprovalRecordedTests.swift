import Foundation
import Logging
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// Issue 36 item 4: approval does not depend on the shell. The threshold is recorded in the
/// database by every process configured with it, and every decision (a person's, a bulk
/// command's, a policy's, the pages') applies the stricter of its own setting and the recorded
/// one; on the command line each decision records the operating-system login beside `--by`, and
/// an approval from the login that decided is refused like one's own.
@Suite("Approval: the threshold recorded in the database, and the operating-system login")
struct ApprovalRecordedTests {
    static let cny648 = ApprovalThreshold(parsing: "CNY=648")!

    /// BulkDecisionTests' outage day with OUT-1 worth ¥680.00, OUT-2 ¥700.00, OUT-3 US$100.00 and
    /// OUT-4 €1.00.
    static func world(_ name: String) throws -> (TestDatabase, Connection) {
        let (database, connection) = try BulkDecisionTests.outageDay(name, count: 6)
        try connection.execute(
            """
            UPDATE reconcile.review_items SET amount_milli = x.amount, currency = x.currency
              FROM (VALUES ('OUT-1', 680000, 'CNY'), ('OUT-2', 700000, 'CNY'), ('OUT-3', 100000, 'USD'),
                           ('OUT-4', 1000, 'EUR')) x(t, amount, currency)
             WHERE transaction_id = x.t
            """)
        try BulkDecisionTests.plantInputs(on: connection)
        return (database, connection)
    }

    static func state(_ transaction: String, _ connection: Connection) throws -> (status: String, outbox: Int) {
        let row = try connection.query(
            """
            SELECT status, (SELECT count(*) FROM reconcile.action_outbox o WHERE o.review_item_id = i.id)::int
              FROM reconcile.review_items i WHERE transaction_id = $1
            """, [transaction])[0]
        return (try row.decode(String.self, at: 0), try row.decode(Int.self, at: 1))
    }

    /// Per currency the lower limit; a currency only one names keeps that one's limit.
    @Test func theStricterOfTwoThresholdsIsTheLowerLimitPerCurrency() throws {
        let own = try #require(ApprovalThreshold(parsing: "CNY=1000,USD=99"))
        let recorded = try #require(ApprovalThreshold(parsing: "CNY=648,JPY=10000"))
        #expect(own.stricter(recorded).description == "CNY=648.00,JPY=10000,USD=99.00")
        #expect(recorded.stricter(own) == own.stricter(recorded))
        #expect(ApprovalThreshold.none.stricter(recorded) == recorded)
        #expect(ApprovalThreshold.none.stricter(.none) == .none)
    }

    /// A process records its threshold where it is stricter; a looser one never replaces it.
    @Test func aProcessRecordsOnlyAStricterLimit() throws {
        let (_, connection) = try TestDatabase.migrated("approval_record")
        #expect(try ApprovalThreshold.recorded(on: connection) == .none)
        let inForce = try Self.cny648.record(on: connection, by: "first")
        #expect(inForce == Self.cny648)
        let looser = try #require(ApprovalThreshold(parsing: "CNY=1000,USD=99"))
        #expect(try looser.record(on: connection, by: "second").description == "CNY=648.00,USD=99.00")
        let limits = try ApprovalThreshold.recordedLimits(on: connection)
        #expect(limits.map { "\($0.currency) \($0.aboveMilli) \($0.recordedBy)" } == ["CNY 648000 first", "USD 99000 second"])
        #expect(try ApprovalThreshold(parsing: "CNY=500")!.record(on: connection, by: "third").description
            == "CNY=500.00,USD=99.00")
        try ApprovalThreshold.replaceRecorded(with: looser, on: connection, by: "operator")
        #expect(try ApprovalThreshold.recorded(on: connection) == looser)
        try ApprovalThreshold.replaceRecorded(with: .none, on: connection, by: "operator")
        #expect(try ApprovalThreshold.recorded(on: connection) == .none)
    }

    /// The case: once a process with the setting recorded it (here `reconcile migrate`),
    /// `review resolve` from a shell without the setting cannot grant a ¥680 item at once: it
    /// waits, with the operating-system login recorded beside `--by`. The same login cannot
    /// approve it under another name (exit 1, nothing changes); another login can.
    @Test func aShellWithoutTheSettingCannotSkipApproval() async throws {
        let (database, connection) = try Self.world("approval_shell")
        let migrated = try await BulkDecisionTests.reconcile(
            [], database, environment: ["RECONCILE_APPROVAL_ABOVE": "CNY=648"], command: ["migrate"])
        #expect(migrated.0 == 0, "\(migrated.2)")
        let id = try ApprovalTests.item("OUT-1", connection)

        let decided = try await BulkDecisionTests.reconcile(
            ["resolve", String(id), "--resolution", "granted", "--by", "mei"], database)
        #expect(decided.0 == 0 && decided.1.contains("waits for another person's approval"), "\(decided.1) \(decided.2)")
        #expect(decided.1.contains("CNY=648.00"), "the message names the threshold in force: \(decided.1)")
        #expect(try Self.state("OUT-1", connection) == ("awaiting_approval", 0))
        let login = try #require(try connection.query(
            """
            SELECT e.os_login, i.pending_os_login FROM reconcile.review_events e
              JOIN reconcile.review_items i ON i.id = e.review_item_id
             WHERE e.review_item_id = $1 AND e.to_status = 'awaiting_approval'
            """, [id]).first)
        let recorded = try #require(try login.decode(String?.self, at: 0), "the event records the login")
        #expect(!recorded.isEmpty)
        #expect(try login.decode(String?.self, at: 1) == recorded, "and so does the waiting decision")

        let own = try await BulkDecisionTests.reconcile(["approve", String(id), "--by", "tom"], database)
        #expect(own.0 == 1, "\(own.1) \(own.2)")
        #expect(own.2.contains("from the operating-system login \(recorded)") && own.2.contains("own decision"), "\(own.2)")
        #expect(try Self.state("OUT-1", connection) == ("awaiting_approval", 0), "refused, nothing changed")

        // Another person, from their own login.
        try connection.execute("UPDATE reconcile.review_items SET pending_os_login = 'mei-login' WHERE id = $1", [id])
        let approved = try await BulkDecisionTests.reconcile(["approve", String(id), "--by", "tom"], database)
        #expect(approved.0 == 0 && approved.1.contains("approved mei's decision"), "\(approved.1) \(approved.2)")
        #expect(try Self.state("OUT-1", connection) == ("resolved", 1))
        let approval = try #require(try connection.query(
            "SELECT os_login FROM reconcile.review_events WHERE review_item_id = $1 AND to_status = 'resolved'", [id]).first)
        #expect(try approval.decode(String?.self, at: 0) == recorded, "the approval records its login too")
    }

    /// Every decider goes through the same gate whatever its own setting: a single decision, a
    /// bulk one, a policy's. The stricter applies per currency: a ¥700 item waits under the
    /// recorded CNY=648 though this process says CNY=1000; a US$100 one waits under this process's
    /// USD=99 that nothing recorded; a € item waits as a currency nobody names.
    @Test func everyDeciderAppliesTheStricterOfItsOwnAndTheRecordedThreshold() throws {
        let (_, connection) = try Self.world("approval_stricter")
        try Self.cny648.record(on: connection, by: "serve")
        let own = try #require(ApprovalThreshold(parsing: "CNY=1000,USD=99"))
        let service = ReviewDecisions(connection: connection, approval: own, judgement: .asStored)
        for transaction in ["OUT-2", "OUT-3", "OUT-4"] {
            let outcome = try service.resolve(
                id: try ApprovalTests.item(transaction, connection), resolution: .granted, by: "mei", note: nil)
            #expect(outcome.item.status == .awaitingApproval && outcome.outbox == nil, "\(transaction)")
        }
        #expect(try Self.state("OUT-5", connection).status == "open")
        let cheap = try service.resolve(id: try ApprovalTests.item("OUT-5", connection), resolution: .granted, by: "mei", note: nil)
        #expect(cheap.item.status == .resolved && cheap.outbox != nil, "¥6.00 is below both")
        #expect(try ApprovalThreshold.recorded(on: connection).description == "CNY=648.00,USD=99.00",
                "the decision recorded its stricter USD limit")

        // A bulk decision from a process without the setting (the pages' and the command line's code).
        var filter = ReviewFilter()
        filter.transactionID = "OUT-1"
        let bulk = try BulkDecision(filter: filter, person: "li", approval: .none, judgement: .asStored)
            .run(.resolve(.granted), note: nil, on: connection)
        #expect(bulk.decided == 1 && bulk.awaitingApproval == 1)
        #expect(try Self.state("OUT-1", connection) == ("awaiting_approval", 0))
    }

    /// A policy applied by a process without the setting (a receiver started before the line was
    /// added) waits above the recorded threshold like anyone.
    @Test func aPolicyWithoutTheSettingWaitsAboveTheRecordedThreshold() throws {
        let (_, connection) = try PolicyTests.database("approval_recorded_policy")
        let small = try PolicyTests.plant(PolicyTests.Planted(transaction: "SMALL", user: "u1", amountMilli: 6_000), on: connection)
        _ = try PolicyTests.plant(PolicyTests.Planted(transaction: "LARGE", user: "u2", amountMilli: 30_000), on: connection)
        try #require(ApprovalThreshold(parsing: "CNY=10")).record(on: connection, by: "run")
        #expect(try PolicyTests.engine(PolicyTests.routine).apply(runID: 2, on: connection).total == 2)
        #expect(try PolicyTests.states(connection) == ["SMALL": "resolved policy:routine", "LARGE": "awaiting_approval"])
        let outbox = try connection.query("SELECT review_item_id FROM reconcile.action_outbox").map { try $0.decode(Int64.self, at: 0) }
        #expect(outbox == [small])
    }

    /// Only an operator raises or removes a recorded limit: `review approval-threshold --set` and
    /// `--clear`; a shell then decides by its own setting again.
    @Test func anOperatorReplacesOrRemovesTheRecordedThreshold() async throws {
        let (database, connection) = try Self.world("approval_operator")
        try Self.cny648.record(on: connection, by: "serve")
        let shown = try await BulkDecisionTests.reconcile(["approval-threshold"], database)
        #expect(shown.0 == 0 && shown.1.contains("recorded: ") && shown.1.contains("by serve"), "\(shown.1) \(shown.2)")
        #expect(shown.1.contains("in force for a decision from this shell: CNY=648.00"), "\(shown.1)")

        let raised = try await BulkDecisionTests.reconcile(["approval-threshold", "--set", "CNY=1000"], database)
        #expect(raised.0 == 0, "\(raised.2)")
        #expect(try ApprovalThreshold.recorded(on: connection).description == "CNY=1000.00")
        let id = try ApprovalTests.item("OUT-2", connection)
        let waits = try await BulkDecisionTests.reconcile(
            ["resolve", String(id), "--resolution", "granted", "--by", "mei"], database)
        #expect(waits.0 == 0, "\(waits.2)")
        #expect(try Self.state("OUT-2", connection) == ("resolved", 1), "¥700 is below CNY=1000: \(waits.1)")

        let cleared = try await BulkDecisionTests.reconcile(["approval-threshold", "--clear"], database)
        #expect(cleared.0 == 0 && cleared.1.contains("no approval threshold recorded"), "\(cleared.1) \(cleared.2)")
        #expect(try ApprovalThreshold.recorded(on: connection) == .none)
        let bad = try await BulkDecisionTests.reconcile(["approval-threshold", "--set", "lots"], database)
        #expect(bad.0 == 64, "\(bad.2)")
        let both = try await BulkDecisionTests.reconcile(["approval-threshold", "--set", "CNY=1", "--clear"], database)
        #expect(both.0 == 64, "\(both.2)")
    }
}
