import ArgumentParser
import Foundation
import Logging
import Postgres
import Reconciliation

/// `reconcile lookup ORDER_ID | --order ID | --transaction ID | --user ID | --token UUID`: the
/// support desk (SPEC section 13).
struct LookupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract: "Show a customer's purchases, deliveries and verdicts, from an order ID, transaction, user or token.",
        discussion: """
            An Apple order ID (from the customer's invoice e-mail, e.g. MK5TTY6V5X) is asked of Apple's Look Up \
            Order ID, which needs App Store Server API credentials. A Google Play order ID (GPA.3312-5678-9012-34567) \
            the job does not hold is asked of Google's Orders API (orders.get, then its purchase token's state), \
            which needs GOOGLE_PLAY_SERVICE_ACCOUNT_FILE. Every verdict comes from the nightly run's \
            rules: ok, pending (too young or still being verified), or a finding kind.

            Exit codes: 0 every verdict ok or pending; 1 an invalid order, nothing found, or Apple did not \
            answer; 2 a finding; 64 bad usage, or an order ID without Server API credentials.
            """
    )

    @Argument(help: "An Apple order ID, as on the customer's invoice e-mail, or a Google Play order ID (GPA.…).")
    var orderID: String?

    @Option(help: "An Apple order ID, or a Google Play order ID (GPA.…).")
    var order: String?

    @Option(help: "A transaction id (from a screenshot, a receipt, the ledger).")
    var transaction: String?

    @Option(help: "The app's account id.")
    var user: String?

    @Option(help: "A StoreKit 2 app account token (UUID).")
    var token: String?

    @Flag(help: "Print the picture as JSON.")
    var json = false

    @Flag(help: "Put the findings in the review queue, as a run would (never a duplicate).")
    var enqueue = false

    @OptionGroup var config: ConfigFileOptions

    @OptionGroup var common: CommonOptions

    func validate() throws { _ = try query() }

    /// The one query given, or a `ValidationError` (exit 64).
    func query() throws -> DeskQuery {
        let candidates: [(DeskQuery.Kind, String?)] = [
            (.order, orderID), (.order, order), (.transaction, transaction), (.user, user), (.token, token),
        ]
        let given = candidates.compactMap { pair in pair.1.map { (pair.0, $0) } }
        guard given.count == 1, let first = given.first else {
            throw ValidationError("give exactly one of ORDER_ID, --order, --transaction, --user, --token")
        }
        do {
            return try DeskQuery(first.0, first.1)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let query = try query()
        let picture = try await common.run { logger in
            // The items `--enqueue` opens name who asked: a person's name, never one the product acts under.
            let actor: ReviewActor = enqueue ? try .person(validating: ActorName.resolve(nil)) : .person(ActorName.resolve(nil))
            let settings = try await config.settings()
            let connection = try settings.connect()
            try Schema.requireUpToDate(connection)
            return try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: logger) { _, api in
                try await GooglePlayServices.withServices(settings: settings, logger: logger) { play in
                    try await DeskService(settings: settings, serverAPI: api, play: play, logger: logger)
                        .lookup(query, enqueue: enqueue, actor: actor, on: connection)
                }
            }
        }
        if json {
            FileHandle.standardOutput.write(try picture.json())
            FileHandle.standardOutput.write(Data("\n".utf8))
        } else {
            print(LookupText.text(picture, enqueued: enqueue))
        }
        if picture.isEmpty { throw ExitStatus.failed }
        if !picture.findings.isEmpty { throw ExitStatus.findings }
    }
}

/// The picture as a support ticket answer.
enum LookupText {
    static func text(_ picture: CustomerPicture, enqueued: Bool) -> String {
        var lines: [String] = []
        let asked = terminalSafe(picture.query.value)
        if let order = picture.order, picture.query.store == .googlePlay {
            switch order.status {
            case .valid:
                lines.append("Order \(asked): a Google Play order; \(count(picture.transactions.count, "transaction")).")
            case .invalid:
                lines.append("Order \(asked): Google Play's Orders API does not know this order ID in any of the app's "
                    + "packages. Check the ID on the customer's Google Play receipt e-mail (GPA.…).")
            case .notAsked:
                lines.append("Order \(asked): not asked of Google (no service account); what the job holds is shown.")
            }
        } else if let order = picture.order {
            lines.append(
                order.status == .valid
                    ? "Order \(asked): valid; Apple lists \(count(picture.transactions.count, "transaction")) in it."
                    : "Order \(asked): Apple says this is not an order ID of this app. Check the ID on the customer's "
                        + "invoice e-mail (Apple's order IDs look like MK5TTY6V5X).")
        } else if picture.isEmpty {
            lines.append("Nothing found for \(picture.query.kind.rawValue) \(asked): no upload, delivery or Apple "
                + "transaction the job knows names it.")
        } else {
            lines.append("\(picture.query.kind.rawValue.capitalized) \(asked): "
                + "\(count(picture.transactions.count, "transaction")).")
        }
        lines.append("Asked: " + picture.asked.map(sourceName).joined(separator: ", ") + ".")
        if picture.unavailable.contains(.playHistory) {
            lines.append("Google Play keeps no purchase history by account: its purchases shown are those uploads, "
                + "the ledger and Google's answers about single orders brought.")
        }
        for (index, transaction) in picture.transactions.enumerated() {
            lines.append("")
            lines.append(contentsOf: describe(transaction, number: index + 1))
        }
        if !picture.isEmpty {
            lines.append("")
            let findings = picture.findings
            if findings.isEmpty {
                lines.append("Summary: nothing to do; every transaction is in order or not yet judged.")
            } else {
                let kinds = Set(findings.map(\.rawValue)).sorted().joined(separator: ", ")
                lines.append("Summary: \(count(findings.count, "transaction")) of \(picture.transactions.count) "
                    + "\(findings.count == 1 ? "needs" : "need") action (\(kinds)).")
                lines.append(enqueued
                    ? "The findings are in the review queue (reconcile review list --user …)."
                    : "Run again with --enqueue to put them in the review queue.")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func describe(_ transaction: CustomerPicture.Transaction, number: Int) -> [String] {
        var head = "\(number). \(transaction.store == .googlePlay ? "Google Play order" : "Transaction") "
            + terminalSafe(transaction.transactionID)
        if let product = transaction.productID { head += " — \(terminalSafe(product))" }
        if let quantity = transaction.quantity { head += " × \(quantity)" }
        if let purchased = transaction.purchaseDate { head += ", bought \(TimeExpression.format(purchased))" }
        if let environment = transaction.environment { head += " (\(terminalSafe(environment.rawValue)))" }
        if let price = transaction.priceMilli, let currency = transaction.currency {
            head += ", \(terminalSafe(Money(milli: price, currency: currency).text()))"
        }
        var lines = [head]
        func field(_ name: String, _ values: [String]) {
            for (index, value) in values.enumerated() {
                lines.append("   " + (index == 0 ? (name + ":").padding(toLength: 12, withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: 12)) + value)
            }
        }
        if let original = transaction.originalTransactionID, original != transaction.transactionID {
            field("Original", [terminalSafe(original)])
        }
        if let revoked = transaction.revocationDate {
            field("Refunded", ["revoked by \(transaction.store == .googlePlay ? "Google" : "Apple") at \(TimeExpression.format(revoked))"
                + (transaction.revocationType.map { " (\(terminalSafe($0)))" } ?? "")])
        }
        let store = transaction.store == .googlePlay ? "Google Play" : "Apple"
        field(transaction.store == .googlePlay ? "Google" : "Apple", [transaction.sources.isEmpty
            ? "no \(store) source confirms it" : "confirmed by " + terminalSafe(transaction.sources.map(\.rawValue).joined(separator: ", "))])
        field("Buyer", [transaction.buyer.userID.map { "\(terminalSafe($0)) (by \(terminalSafe(transaction.buyer.basis?.rawValue ?? "?")))" }
            ?? "unknown"])
        field("Ledger", transaction.deliveries.isEmpty ? ["no delivery"] : transaction.deliveries.map {
            "#\($0.id) to \(terminalSafe($0.userID)): \(terminalSafe($0.productID)) × \($0.quantity) at "
                + TimeExpression.format($0.deliveredAt)
                + ($0.revokedAt.map { ", taken back \(TimeExpression.format($0))" } ?? "")
        })
        field("Uploads", transaction.uploads.isEmpty ? ["none carried it"] : transaction.uploads.map {
            "#\($0.id) by \(terminalSafe($0.userID)) (\(terminalSafe($0.kind.rawValue))) at \(TimeExpression.format($0.uploadedAt)): "
                + terminalSafe($0.verification?.rawValue ?? "not verified yet")
        })
        if !transaction.reviewItems.isEmpty {
            field("Review", transaction.reviewItems.map {
                "#\($0.id) \($0.kind.rawValue), \($0.status.rawValue)"
                    + ($0.resolution.map { " (\($0.rawValue))" } ?? "")
                    + ($0.assignee.map { ", with \(terminalSafe($0))" } ?? "")
            })
        }
        field("Verdict", [verdict(transaction)])
        return lines
    }

    private static func verdict(_ transaction: CustomerPicture.Transaction) -> String {
        guard let kind = transaction.finding else {
            return transaction.verdict == .pending
                ? "pending: not judged yet (bought within the grace period, or its evidence is still being verified)"
                : "ok: \(transaction.store == .googlePlay ? "Google's" : "Apple's") record and the ledger agree"
        }
        // The CLI stays English: the English catalog's line for a verdict.
        let why = Catalog.of(.english)["kind.\(kind.rawValue).verdict"]
        return "\(kind.rawValue): \(why); suggested action: \(kind.suggestedAction)"
    }

    /// A source the desk asked, as the text names it.
    private static func sourceName(_ source: CustomerPicture.AskedSource) -> String {
        switch source {
        case .stored: "the job's records"
        case .lookUpOrderID: "Apple's Look Up Order ID"
        case .transactionInfo: "Apple's Get Transaction Info"
        case .transactionHistory: "Apple's Get Transaction History"
        case .ordersGet: "Google's Orders API (orders.get)"
        case .purchaseState: "Google's purchase state (productsv2/subscriptionsv2)"
        }
    }

    private static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
