import ArgumentParser
import Foundation
import Logging
import Postgres
import Reconciliation

/// How review commands reach the database (DATABASE_URL, or the `--config` file's) and log.
struct ReviewDatabaseOptions: ParsableArguments {
    @OptionGroup var config: ConfigFileOptions
    @OptionGroup var common: CommonOptions

    /// Runs the command's work as ``CommonOptions/run(label:_:)`` does.
    func run<Result>(_ work: (Logger) async throws -> Result) async throws -> Result {
        try await common.run(work)
    }

    /// Connects and hands back the queue's decisions, with the settings' approval threshold and the
    /// operating-system login recorded with every decision (``OperatingSystemLogin``).
    func decisions() async throws -> ReviewDecisions {
        let settings = try await settings()
        var decisions = ReviewDecisions(
            connection: try settings.connect(), approval: settings.approvalAbove,
            judgement: try DecisionJudgement.rules(settings))
        decisions.osLogin = OperatingSystemLogin.current()
        return decisions
    }

    /// Connects and hands back the queue, to read.
    func queue() async throws -> ReviewQueue {
        ReviewQueue(connection: try await settings().connect())
    }

    /// The settings (environment, else the `--config` file); review commands need no bundle id.
    func settings() async throws -> Settings {
        try await config.settings(requireBundleIDs: false)
    }
}

/// The filters `list`, `export` and the bulk decisions of `resolve` and `dismiss` share.
struct ReviewFilterOptions: ParsableArguments {
    @Option(
        help: "Status: open, in_review, awaiting_approval, resolved, dismissed, auto_resolved (comma list; default any).",
        transform: commaList("--status"))
    var status: [ReviewStatus] = []

    @Option(help: "Finding kind, e.g. missed_delivery (comma list; default any).", transform: commaList("--kind"))
    var kind: [FindingKind] = []

    @Option(help: "Severity: high, medium, low (comma list; default any).", transform: commaList("--severity"))
    var severity: [Severity] = []

    @Option(help: "Only this account (user id).")
    var user: String?

    @Option(help: "Only this product id.")
    var product: String?

    @Option(help: "Only this transaction (or original transaction) id.")
    var transaction: String?

    @Option(help: "Only items claimed by this person.")
    var assignee: String?

    @Option(help: "Detected at or after: a date (2026-11-01), an RFC 3339 time, or a duration back (7d).")
    var since: String?

    @Option(help: "Detected before: a date, an RFC 3339 time, or a duration back.")
    var until: String?

    @Option(help: "Only items first detected by this run (its id).")
    var run: Int64?

    @Option(
        name: .customLong("max-amount"),
        help: ArgumentHelp(
            "Only items worth at most this much in a currency: CUR=N (e.g. CNY=30; repeat for several currencies).",
            discussion: """
                Amounts are in major units (30 is ¥30.00); an item in a currency not named, or of unknown value, \
                is left out. A bare amount (--max-amount 30) needs --currency, which names its currency: amounts \
                of different currencies are not comparable, so a bare amount alone is refused.
                """,
            valueName: "CUR=N"))
    var maxAmount: [String] = []

    @Option(help: "Only items in this currency (ISO code, e.g. CNY).")
    var currency: String?

    @Option(help: "Only this store's items: app_store or google_play.")
    var store: Store?

    /// Whether any filter is given.
    var isEmpty: Bool {
        status.isEmpty && kind.isEmpty && severity.isEmpty && user == nil && product == nil && transaction == nil
            && assignee == nil && since == nil && until == nil && run == nil && maxAmount.isEmpty && currency == nil
            && store == nil
    }

    func validate() throws { _ = try filter() }

    /// The filter, or a `ValidationError` naming the bad value (exit 64).
    func filter(now: Date = Date()) throws -> ReviewFilter {
        var filter = ReviewFilter()
        filter.statuses = status
        filter.kinds = kind
        filter.severities = severity
        filter.userID = user
        filter.productID = product
        filter.transactionID = transaction
        filter.assignee = assignee
        for (name, text, keyPath) in [("--since", since, \ReviewFilter.since), ("--until", until, \ReviewFilter.until)] {
            guard let text else { continue }
            guard let instant = TimeExpression.instant(text, now: now) else {
                throw ValidationError("\(name) \(text): expected a date, an RFC 3339 time or a duration such as 7d")
            }
            filter[keyPath: keyPath] = instant
        }
        filter.runID = run
        filter.currency = currency?.uppercased()
        filter.maxAmountMilliByCurrency = try Self.maxAmounts(maxAmount, currency: filter.currency)
        filter.store = store
        return filter
    }

    /// `--max-amount`'s values per currency: each `CUR=N` (SPEC section 17), or a bare `N` in the
    /// `--currency` given (the first form of the option). A bare amount without a currency, a
    /// currency twice, or `--currency` naming none of the currencies bounded is a usage error.
    static func maxAmounts(_ values: [String], currency: String?) throws -> [String: Int64] {
        var amounts: [String: Int64] = [:]
        for text in values {
            let pair = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            let code: String
            if pair.count == 2 {
                guard (3...8).contains(pair[0].count), pair[0].allSatisfy({ $0.isASCII && $0.isLetter }) else {
                    throw ValidationError("--max-amount \(text): expected a currency code before =, such as CNY=30")
                }
                code = pair[0].uppercased()
            } else {
                guard let currency else {
                    throw ValidationError(
                        "--max-amount \(text): name its currency (--max-amount CNY=\(text), or --currency CNY): "
                            + "amounts in different currencies are not comparable")
                }
                code = currency
            }
            guard let milli = Money.milli(major: pair[pair.count - 1]) else {
                throw ValidationError("--max-amount \(text): expected an amount such as 6 or 6.50 (CUR=6.50)")
            }
            guard amounts[code] == nil else {
                throw ValidationError("--max-amount: \(code) is bounded twice")
            }
            amounts[code] = milli
        }
        if let currency, !amounts.isEmpty, amounts[currency] == nil {
            throw ValidationError(
                "--currency \(currency) and --max-amount \(amounts.keys.sorted().joined(separator: ", ")) select no item")
        }
        return amounts
    }
}

/// A code of the domain an option takes by its raw text, with every value this build knows.
protocol CommandLineValue: RawRepresentable, SendableMetatype where RawValue == String {
    static var commandLineValues: [Self] { get }
}

extension ReviewStatus: CommandLineValue {
    static var commandLineValues: [ReviewStatus] { allCases }
}

extension FindingKind: CommandLineValue {
    static var commandLineValues: [FindingKind] { allCases }
}

extension Severity: CommandLineValue {
    static var commandLineValues: [Severity] { known }
}

extension Store: ExpressibleByArgument {}

/// Parses an option's comma list of domain codes (`--status open,in_review`); a value this build
/// does not know is a usage error naming the ones it does (exit 64).
func commaList<Value: CommandLineValue>(_ option: String) -> @Sendable (String) throws -> [Value] {
    { text in
        try text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map {
            guard let value = Value(rawValue: $0), Value.commandLineValues.contains(where: { $0.rawValue == value.rawValue })
            else {
                throw ValidationError(
                    "\(option) \($0): expected \(Value.commandLineValues.map(\.rawValue).joined(separator: ", "))")
            }
            return value
        }
    }
}

/// Text from clients (user and product ids) made safe to print on a terminal: control
/// characters, which could move the cursor or rewrite the screen, become `?`.
func terminalSafe(_ text: String?) -> String {
    guard let text else { return "—" }
    return String(String.UnicodeScalarView(text.unicodeScalars.map {
        $0.properties.generalCategory == .control || $0.properties.generalCategory == .format ? "?" : $0
    }))
}

/// Who acts (`--by` of claim, resolve, dismiss): the flag, else `RECONCILE_ACTOR`, else the
/// login name, so that a person never types their name twice a day.
enum ActorName {
    static func resolve(
        _ given: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        for candidate in [given, environment["RECONCILE_ACTOR"], environment["LOGNAME"], environment["USER"]] {
            if let name = candidate?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty { return name }
        }
        return ProcessInfo.processInfo.userName.isEmpty ? "unknown" : ProcessInfo.processInfo.userName
    }
}
