import Foundation
import Postgres

/// How a decision that makes the app act (`granted`, `revoked`, `moved`) learns whether its item's
/// finding still holds at that moment (SPEC section 6): the item's transaction is judged again
/// with the nightly rules (``Differ/computeFindings(_:evidence:on:)`` over exactly that
/// transaction, with the nightly fingerprints), in the decision's own database transaction, after
/// the item is locked. A missed delivery the app's late callback credited in the morning is then
/// no missed delivery in the afternoon, and nothing is granted twice.
///
/// Every process that decides real items builds it from its settings (``rules(_:)``): the review
/// commands, the pages, bulk decisions and the policies of a run or of the receiver.
public struct DecisionJudgement: Sendable {
    enum Source: Sendable {
        case rules(Differ, Settings)
        /// The rules' judgement is already in this transaction's work tables (``judgingOnce(_:on:)``).
        case judgedInThisTransaction(Differ)
        case asStored
        case refusing
    }

    let source: Source

    /// Judged again with the nightly rules as `settings` configure them (relations, bundle ids,
    /// environment, grace, whether the Server API is on). Throws when a relation name is invalid.
    public static func rules(_ settings: Settings) throws -> DecisionJudgement {
        DecisionJudgement(source: .rules(Differ(relations: settings.relations), settings))
    }

    /// The item as stored is taken as the truth: only for queues planted without the inputs their
    /// findings came from (the tests' fixtures), which the rules cannot judge. Not public: no
    /// process deciding real items can choose it.
    static let asStored = DecisionJudgement(source: .asStored)

    /// No decision that makes the app act is taken: for a process that decides no review item
    /// (the notification receiver's HTTP side), so that none can by mistake.
    public static let refusingDecisions = DecisionJudgement(source: .refusing)

    /// What judging an item again found.
    enum Verdict {
        /// The finding holds; the item as refreshed from it (evidence, accounts, units).
        case holds(ReviewItem)
        /// The finding is gone; what is true now, for the person and the item's history.
        case gone(String)
        /// An upload still being verified holds the judgement back: nothing can be said now.
        case held
    }

    /// Judges `item` (locked, in the caller's transaction) again; refreshes it when its finding
    /// holds, so the action drafted next is the one the current truth asks for.
    func judge(_ item: ReviewItem, on connection: Connection) throws -> Verdict {
        let differ: Differ
        switch source {
        case .rules(let rules, _):
            guard let transactionID = item.transactionID else {
                throw ReviewError.notJudgedNow(id: item.id, reason: "the item names no transaction to judge again")
            }
            try judge(transactions: [transactionID], item: item.id, on: connection)
            differ = rules
        case .judgedInThisTransaction(let rules): differ = rules
        case .asStored: return .holds(item)
        case .refusing: throw ReviewError.notJudgedNow(id: item.id, reason: "this process decides no review item")
        }
        // Prepared once a session: a bulk decision reads it for each of its thousands of items.
        let row = try connection.queryPrepared(
            ReviewSQL.rejudged, ["id": item.id], relations: ["deliveries": differ.relations.deliveries])[0]
        if try row.decode(Bool.self, "holds") { return .holds(try ReviewItem(row: row)) }
        if try row.decode(Bool.self, "held") { return .held }
        let kindsNow: String? = try row["kinds_now"]
        let unrevoked: String? = try row["ledger_unrevoked"]
        let revoked: Int = try row["ledger_revoked"]
        var now = "judged again now, transaction \(item.transactionID ?? "?") is no \(item.kind) any more"
        now += kindsNow.map { " (its findings now: \($0))" } ?? " (no finding at all)"
        now += "; the ledger holds " + (unrevoked.map { "unrevoked \($0)" } ?? "no unrevoked delivery")
        if revoked > 0 { now += " and \(revoked) revoked" }
        return .gone(now)
    }

    /// Judges `transactions` with the nightly rules into the diff's work tables of the caller's
    /// transaction, once for a batch of decisions (``BulkDecision``), and returns the judgement
    /// that reads them: each decision of the batch in the same transaction then judges its item
    /// from them instead of judging again. Nil when this judgement does not judge by the rules.
    func judgingOnce(_ transactions: [String], on connection: Connection) throws -> DecisionJudgement? {
        guard case .rules(let differ, _) = source, !transactions.isEmpty else { return nil }
        try judge(transactions: transactions, item: nil, on: connection)
        return DecisionJudgement(source: .judgedInThisTransaction(differ))
    }

    private func judge(transactions: [String], item: Int64?, on connection: Connection) throws {
        guard case .rules(let differ, let settings) = source else { return }
        guard settings.namesAnApp else {
            throw ReviewError.notJudgedNow(
                id: item ?? 0, reason: "neither RECONCILE_BUNDLE_IDS nor GOOGLE_PLAY_PACKAGE_NAMES is set, and the nightly "
                    + "rules need them to judge the item again before the app acts; set them as the nightly run has them")
        }
        let parameters = Differ.Parameters(
            settings: settings, runID: 0, judgeBefore: Date().addingTimeInterval(-settings.grace),
            scope: .transactions(transactions), resumesAfter: 0)
        try differ.computeFindings(parameters, evidence: true, on: connection)
    }
}
