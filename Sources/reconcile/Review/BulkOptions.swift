import ArgumentParser
import Foundation
import Logging
import Postgres
import Reconciliation

/// How `review resolve` and `review dismiss` decide many items at once: a filter instead of an
/// id, `--dry-run` to see what it would take, `--yes` (or, on a terminal, typing the count) to do
/// it, and a limit.
struct BulkOptions: ParsableArguments {
    @Flag(name: .customLong("dry-run"), help: "With a filter: print how many items, their value and the first few; decide nothing.")
    var dryRun = false

    @Flag(help: """
        With --dry-run: print {"count": n, "amount": {"CNY": 123.0}, "ids": [...]} instead (amounts in major units).
        """)
    var json = false

    @Flag(help: "With a filter: decide without asking (otherwise a terminal asks to type the count).")
    var yes = false

    @Option(help: "With a filter: the most items one command decides (default: RECONCILE_BULK_LIMIT, else 5000).")
    var limit: Int?

    /// The limit: `--limit`, else the settings' (`RECONCILE_BULK_LIMIT`, else 5,000).
    func resolvedLimit(_ settings: Settings) throws -> Int {
        guard let limit else { return settings.bulkLimit }
        guard limit > 0 else { throw ValidationError("--limit \(limit): expected a positive number") }
        return limit
    }
}

/// Where `review resolve` and `review dismiss` take their items from: one id, or a filter for a
/// bulk decision.
struct ItemSelection: ParsableArguments {
    @Argument(help: "The review item id (or give a filter instead).")
    var id: Int64?

    @OptionGroup var filter: ReviewFilterOptions
    @OptionGroup var bulk: BulkOptions

    /// Checks that exactly one of the two is given, and no bulk option without a filter.
    func validate() throws {
        if id != nil, !filter.isEmpty {
            throw ValidationError("give an item id or a filter (--kind, --status, …), not both")
        }
        if id == nil, filter.isEmpty {
            throw ValidationError("give an item id, or a filter (--kind, --status, --run, --max-amount, …) to decide many")
        }
        if id != nil, bulk.dryRun || bulk.yes || bulk.limit != nil || bulk.json {
            throw ValidationError("--dry-run, --json, --yes and --limit go with a filter, not an item id")
        }
        if bulk.json, !bulk.dryRun {
            throw ValidationError("--json goes with --dry-run: it prints what a batch would take")
        }
    }

    /// Decides the item, or every item the filter takes.
    func decide(
        _ decision: BulkDecision.Decision, verb: String, note: String?, by person: String,
        database: ReviewDatabaseOptions, logger: Logger
    ) async throws {
        guard let id else {
            return try await decideMany(
                decision, verb: verb, note: note, person: person, database: database, logger: logger)
        }
        print(try await database.decisions().decide(decision, id: id, by: person, note: note).message)
        // The decision reaches the app's webhook at once when one is configured.
        _ = try? await database.deliverOutbox(logger: logger)
    }

    /// Decides every item `filter` takes, as `verb` says: prints the preview; on `--dry-run`
    /// stops there; otherwise needs `--yes` or, on a terminal, the count typed back; then decides
    /// each item with a progress line and prints what it did.
    private func decideMany(
        _ decision: BulkDecision.Decision, verb: String, note: String?, person: String,
        database: ReviewDatabaseOptions, logger: Logger
    ) async throws {
        let settings = try await database.settings()
        let connection = try settings.connect()
        var bulkDecision = BulkDecision(
            filter: try filter.filter(), person: person, limit: try bulk.resolvedLimit(settings),
            approval: settings.approvalAbove, judgement: try DecisionJudgement.rules(settings))
        bulkDecision.osLogin = OperatingSystemLogin.current()
        // What the person confirms by typing the count is exactly these items, not what a run or
        // the receiver opens while they read (with --yes, the filter is what is confirmed).
        let shown = try bulkDecision.confirmable(on: connection)
        // Over the limit, the whole filter's count is shown, and refused below.
        let previewed = shown.count <= bulkDecision.limit ? bulkDecision.narrowed(to: shown) : nil
        let preview = try (previewed ?? bulkDecision).preview(on: connection)
        if bulk.json {
            print(Self.json(preview, ids: Array(shown.prefix(bulkDecision.limit))))
            if preview.items > bulkDecision.limit {
                FileHandle.standardError.write(Data(
                    "reconcile: \(BulkDecision.TooMany(matching: preview.items, limit: bulkDecision.limit))\n".utf8))
            }
            return
        }
        print(Self.describe(preview, verb: verb))
        guard preview.items > 0, !bulk.dryRun else { return }
        guard preview.items <= bulkDecision.limit else {
            throw BulkDecision.TooMany(matching: preview.items, limit: bulkDecision.limit)
        }
        if !bulk.yes {
            guard isatty(STDIN_FILENO) == 1 else {
                throw ReviewError.invalidInput("deciding \(preview.items) items needs --yes (or a terminal to confirm on)")
            }
            print("Type \(preview.items) to \(verb) these items: ", terminator: "")
            guard readLine()?.trimmingCharacters(in: .whitespaces) == String(preview.items) else {
                print("Nothing decided.")
                throw ExitCode(1)
            }
        }
        let outcome = try bulkDecision.run(decision, note: note, only: bulk.yes ? nil : shown, on: connection) {
            done, total in
            if done % 100 == 0 || done == total {
                FileHandle.standardError.write(Data("\(verb): \(done)/\(total)\n".utf8))
            }
        }
        print("\(outcome.decided - outcome.awaitingApproval) item(s) \(verb == "dismiss" ? "dismissed" : "resolved") by \(terminalSafe(person)).")
        if outcome.awaitingApproval > 0 {
            print("\(outcome.awaitingApproval) item(s) above RECONCILE_APPROVAL_ABOVE wait for another person's approval "
                + "(reconcile review list --status awaiting_approval).")
        }
        for (id, reason) in outcome.skipped { print("  #\(id) left as it is: \(terminalSafe(reason))") }
        // The decisions reach the app's webhook at once when one is configured.
        _ = try? await database.deliverOutbox(logger: logger)
    }

    /// `--dry-run --json` (SPEC section 17): `{"count": n, "amount": {"CNY": 123.0}, "ids": [...]}`, the
    /// value per currency in major units (items of unknown value are counted, not summed), the ids
    /// oldest first (at most the limit: a batch over it is refused, and stderr says so).
    static func json(_ preview: BulkDecision.Preview, ids: [Int64]) -> String {
        let amounts = preview.valueByCurrency.map {
            "\(JSONText.string($0.currency)): \(Money(milli: $0.amountMilli, currency: $0.currency).majorUnitsJSON)"
        }
        return "{\"count\": \(preview.items), \"amount\": {\(amounts.joined(separator: ", "))}, "
            + "\"ids\": [\(ids.map(String.init).joined(separator: ", "))]}"
    }

    static func describe(_ preview: BulkDecision.Preview, verb: String) -> String {
        guard preview.items > 0 else { return "No item matches the filter that you may \(verb) now." }
        var lines = ["\(preview.items) item(s) to \(verb):"]
        for entry in preview.valueByCurrency {
            lines.append("  \(Money(milli: entry.amountMilli, currency: entry.currency).text()) in \(entry.items) item(s)")
        }
        if preview.unknownValue > 0 { lines.append("  \(preview.unknownValue) item(s) of unknown value") }
        lines.append("First:")
        for item in preview.first {
            let value = item.amountMilli.map { Money(milli: $0, currency: item.currency ?? "").text() } ?? "—"
            lines.append("  #\(item.id) \(item.kind) \(terminalSafe(item.transactionID)) \(terminalSafe(item.userID)) "
                + "\(terminalSafe(item.productID)) \(value)")
        }
        return lines.joined(separator: "\n")
    }
}
