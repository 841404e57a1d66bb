import Foundation
import Postgres

/// What one policy rule decided in one run (a nightly run or a pass of the notification receiver),
/// read from its events (`sql/policy/decided.sql`): report.json's `policies`, the reports' and the
/// runs page's table.
public struct PolicyTally: Sendable, Equatable {
    /// The rule's name.
    public var rule: String
    /// Items it decided.
    public var decided: Int
    /// Their value per currency, currencies in order (items of unknown value count only in `decided`).
    public var amounts: [Money]

    public init(rule: String, decided: Int, amounts: [Money] = []) {
        self.rule = rule
        self.decided = decided
        self.amounts = amounts
    }

    /// The tallies of each of `runIDs` that any rule decided in, by run, rules in name order.
    public static func byRun(_ runIDs: [Int64], on connection: Connection) throws -> [Int64: [PolicyTally]] {
        guard !runIDs.isEmpty else { return [:] }
        var tallies: [Int64: [PolicyTally]] = [:]
        for row in try connection.query(PolicyEngine.SQL.decided, ["run_ids": runIDs]) {
            let run: Int64 = try row["run_id"], rule: String = try row["rule"], items: Int = try row["items"]
            var list = tallies[run] ?? []
            if list.last?.rule != rule { list.append(PolicyTally(rule: rule, decided: 0)) }
            list[list.count - 1].decided += items
            if let currency: String = try row["currency"] {
                list[list.count - 1].amounts.append(Money(milli: try row["amount_milli"], currency: currency))
            }
            tallies[run] = list
        }
        return tallies
    }

    /// Run `runID`'s tallies: every rule of `file` in file order, zeros included, then any other
    /// rule that decided in it.
    public static func forRun(_ runID: Int64, file: PolicyFile?, on connection: Connection) throws -> [PolicyTally] {
        let decided = try byRun([runID], on: connection)[runID] ?? []
        let named = (file?.rules ?? []).map { rule in
            decided.first { $0.rule == rule.name } ?? PolicyTally(rule: rule.name, decided: 0)
        }
        return named + decided.filter { tally in !named.contains { $0.rule == tally.rule } }
    }
}

extension PolicyTally {
    /// The value decided, each currency in the reader's format (`¥18.00, US$5.00`), or `—`.
    public func amountText(_ reader: Reader) -> String {
        guard !amounts.isEmpty else { return "—" }
        return amounts.map { reader.money(milli: $0.milli, currency: $0.currency) }.joined(separator: ", ")
    }
}
