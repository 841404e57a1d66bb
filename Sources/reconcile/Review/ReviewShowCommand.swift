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
    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = common.makeLogger()
        do {
            let detail = try await database.service().detail(id: id)
            let evidence = (try? JSONSerialization.jsonObject(with: Data(detail.evidence.utf8))) ?? [String: Any]()
            if json {
                var object = ReviewOutput.json(detail.item)
                object["evidence"] = evidence
                object["events"] = detail.events.map(ReviewOutput.json)
                object["outbox"] = detail.outbox.map(ReviewOutput.json) ?? NSNull()
                try ReviewOutput.print(json: object)
                return
            }
            let item = detail.item
            var lines = [
                "Review item \(item.id): \(item.kind) (\(item.severity)), \(item.status.rawValue)",
                "  transaction   \(terminalSafe(item.transactionID)) (original \(terminalSafe(item.originalTransactionID)))",
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
            if let entry = detail.outbox {
                lines.append("  outbox        #\(entry.id) \(terminalSafe(ReviewService.describe(entry))), "
                    + (entry.consumedAt.map { "carried out \(TimeExpression.format($0))" } ?? "pending"))
            }
            lines += ["", "Evidence:"]
            let pretty = (try? JSONSerialization.data(
                withJSONObject: evidence, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
                .map { String(decoding: $0, as: UTF8.self) } ?? detail.evidence
            lines += pretty.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + terminalSafe(String($0)) }
            lines += ["", "History:"]
            for event in detail.events {
                var line = "  \(TimeExpression.format(event.createdAt))  \(terminalSafe(event.actor)): "
                    + "\(event.fromStatus ?? "—") → \(event.toStatus)"
                if let note = event.note { line += "  “\(terminalSafe(note))”" }
                lines.append(line)
            }
            print(lines.joined(separator: "\n"))
        } catch {
            throw reviewFailure(error, logger: logger)
        }
    }
}
