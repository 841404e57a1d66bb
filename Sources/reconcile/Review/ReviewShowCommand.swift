import ArgumentParser
import Foundation
import Reconciliation

/// `reconcile review show ID`: an item with its evidence, history and outbox row.
struct ReviewShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a review item with its full evidence and event history.")

    @Argument(help: "The review item id.")
    var id: Int64

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var database: ReviewDatabaseOptions

    func run() async throws {
        try await database.run { _ in
            let detail = try await database.queue().detail(id: id)
            let evidence = (try? JSONSerialization.jsonObject(with: Data(detail.evidence.utf8))) ?? [String: Any]()
            if json {
                var object = ReviewOutput.json(detail.item)
                object["evidence"] = evidence
                object["events"] = detail.events.map(ReviewOutput.json)
                object["outbox"] = detail.outbox.map(ReviewOutput.json) ?? NSNull()
                object["consumption_answers"] = detail.consumptionAnswers.map(ReviewOutput.json)
                try ReviewOutput.print(json: object)
                return
            }
            let item = detail.item
            var lines = [
                "Review item \(item.id): \(item.kind) (\(item.severity)), \(item.status.rawValue)",
                "  store         \(item.store)",
                // Google Play's transaction id is its order id (SPEC section 18).
                (item.store == .googlePlay ? "  order id      " : "  transaction   ")
                    + "\(terminalSafe(item.transactionID)) (original \(terminalSafe(item.originalTransactionID)))",
                "  user          \(terminalSafe(item.userID))",
                "  product       \(terminalSafe(item.productID))",
                "  suggested     \(item.suggestedAction)",
                "  detected      \(TimeExpression.format(item.createdAt)) by run \(item.firstSeenRun), last seen in run \(item.lastSeenRun)",
            ]
            if let assignee = item.assignee { lines.append("  assignee      \(terminalSafe(assignee))") }
            if item.status.isDecided {
                lines.append("  decision      \(item.resolution?.rawValue ?? "dismissed") by \(terminalSafe(item.resolvedBy)) at "
                    + "\(item.resolvedAt.map(TimeExpression.format) ?? "?")")
            }
            if let note = item.note { lines.append("  note          \(terminalSafe(note))") }
            if let value = item.value { lines.append("  value         \(value.text())") }
            if let pending = item.pending {
                lines.append("  waiting       \(pending.resolution.rawValue) by \(terminalSafe(pending.by)) at "
                    + "\(TimeExpression.format(pending.at)), for another person's approval")
                if let note = pending.note { lines.append("  its note      \(terminalSafe(note))") }
            }
            if let approver = item.approvedBy {
                lines.append("  approved      by \(terminalSafe(approver)) at \(item.approvedAt.map(TimeExpression.format) ?? "?")")
            }
            if let entry = detail.outbox {
                lines.append("  outbox        #\(entry.id) \(terminalSafe(entry.actionDescription)), "
                    + (entry.consumedAt.map { "carried out \(TimeExpression.format($0))" } ?? "pending"))
            }
            do {
                lines += EvidenceText.lines(try Evidence(json: detail.evidence))
            } catch {
                // Evidence the job wrote always reads; a row written by hand may not (--json shows it).
                lines += ["", "Evidence: not in the shape the job writes (\(terminalSafe("\(error)"))); see --json"]
            }
            lines += EvidenceText.lines(detail.consumptionAnswers)
            lines += ["", "History:"]
            for event in detail.events {
                var line = "  \(TimeExpression.format(event.createdAt))  \(terminalSafe(event.actor)): "
                    + "\(event.fromStatus?.rawValue ?? "—") → \(event.toStatus.rawValue)"
                if let note = event.note { line += "  “\(terminalSafe(note))”" }
                lines.append(line)
            }
            print(lines.joined(separator: "\n"))
        }
    }
}

/// The evidence as the web item page shows it: Apple's transaction, the buyer, the ledger rows and
/// the uploads, one readable line each (`--json` keeps the raw evidence).
enum EvidenceText {
    static func lines(_ evidence: Evidence) -> [String] {
        func text(_ value: String?) -> String { value.map { $0.isEmpty ? "—" : terminalSafe($0) } ?? "—" }
        func text<T: BinaryInteger>(_ value: T?) -> String { value.map { String($0) } ?? "—" }
        func text<T: RawRepresentable<String>>(_ value: T?) -> String { text(value?.rawValue) }
        var lines = ["", "Apple transaction:"]
        if let apple = evidence.appleTransaction {
            lines.append("  \(text(apple.transactionID)) (original \(text(apple.originalTransactionID))), "
                + "\(text(apple.productID)) × \(text(apple.quantity)), \(text(apple.environment)), "
                + "bundle \(text(apple.bundleID))")
            let price = apple.priceMilli.flatMap { milli in apple.currency.map { Money(milli: milli, currency: $0).text() } }
            lines.append("  bought \(text(apple.purchaseDate)), price \(price.map(terminalSafe) ?? "—"), "
                + "source \(text(apple.source))")
            if let revoked = apple.revocationDate {
                lines.append("  revoked \(terminalSafe(revoked)) (reason \(text(apple.revocationReason)))")
            }
        } else {
            lines.append("  none: no verified source of this app holds the transaction")
        }
        if let buyer = evidence.buyer {
            lines += ["", "Buyer:", "  \(text(buyer.userID)) (by \(text(buyer.basis)), "
                + "\(buyer.uploaders) uploading account(s))"]
        }
        func section<Row>(_ heading: String, _ rows: [Row], _ describe: (Row) -> [String]) {
            lines += ["", heading] + (rows.isEmpty ? ["  none"] : rows.flatMap(describe))
        }
        section("Ledger rows:", evidence.deliveries) { row in
            ["  #\(text(row.id)) \(text(row.transactionID)) to \(text(row.userID)): "
                + "\(text(row.productID)) × \(text(row.quantity)) at \(text(row.deliveredAt))"
                + (row.revokedAt.map { ", revoked \(terminalSafe($0))" } ?? "")]
        }
        section("Uploads:", evidence.uploads) { upload in
            [
                "  #\(upload.id) by \(text(upload.userID)) (\(text(upload.kind))) at "
                    + "\(text(upload.uploadedAt)): \(text(upload.verification))"
                    + (upload.error.map { " (\(terminalSafe($0)))" } ?? ""),
                "     device \(text(upload.device?.text)); username \(text(upload.applicationUsername)); "
                    + "token \(text(upload.appAccountToken)); claimed \(text(upload.claimedTransactionID))",
            ]
        }
        return lines
    }
}

extension EvidenceText {
    /// What was answered to Apple about refund requests and what Apple decided, as the item page
    /// shows it (SPEC section 14).
    static func lines(_ answers: [ConsumptionAnswerRecord]) -> [String] {
        guard !answers.isEmpty else { return [] }
        var lines = ["", "Refund requests (what was answered to Apple):"]
        for answer in answers {
            let sent = answer.sent
            var line = "  asked \(TimeExpression.format(answer.requestedAt)): "
            switch answer.status {
            case .answered: line += "sent \(TimeExpression.format(answer.answeredAt))"
            case .expired: line += "expired, not sent (past Apple's 12 hours)"
            case .failed:
                line += "failed \(TimeExpression.format(answer.answeredAt))"
                    + (answer.appleError.map { " (\(terminalSafe($0)))" } ?? "")
            }
            if answer.body != nil {
                line += "; deliveryStatus \(terminalSafe(sent.deliveryStatus)), consumptionPercentage "
                    + "\(sent.consumptionPercentage.map(String.init) ?? "—"), refundPreference "
                    + "\(terminalSafe(sent.refundPreference))"
            }
            line += "; Apple: " + (answer.outcome.map {
                "\($0.rawValue) \(answer.decidedAt.map(TimeExpression.format) ?? "")"
            } ?? "not decided yet")
            lines.append(line)
        }
        return lines
    }
}
