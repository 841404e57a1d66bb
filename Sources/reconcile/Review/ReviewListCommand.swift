import ArgumentParser
import Foundation
import Reconciliation

/// `reconcile review list`: one page of the queue.
struct ReviewListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List review items matching a filter, most severe first.",
        discussion: "Without --status, every status is listed; support staff usually want --status open,in_review."
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, csv
    }

    @OptionGroup var filter: ReviewFilterOptions
    @OptionGroup var database: ReviewDatabaseOptions

    @Option(help: "Output: table, json or csv.")
    var format: Format = .table

    @Option(help: "Items per page (1–\(ReviewQueue.maximumPageSize)).")
    var limit = 50

    @Option(help: "Page number, from 1 to \(ReviewQueue.maximumPage).")
    var page = 1

    func validate() throws {
        guard (1...ReviewQueue.maximumPageSize).contains(limit) else {
            throw ValidationError("--limit must be between 1 and \(ReviewQueue.maximumPageSize)")
        }
        guard (1...ReviewQueue.maximumPage).contains(page) else {
            throw ValidationError("--page must be between 1 and \(ReviewQueue.maximumPage)")
        }
    }

    func run() async throws {
        try await database.run { _ in
            let queue = try await database.queue()
            let result = try queue.list(try filter.filter(), page: page, limit: limit)
            switch format {
            case .json:
                try ReviewOutput.print(json: [
                    "total": result.total, "page": result.page, "limit": result.limit, "pages": result.pageCount,
                    "items": result.items.map(ReviewOutput.json),
                ] as [String: Any])
            case .csv:
                // `store` last (SPEC section 18): the columns before it keep their places.
                let header =
                    "id,status,kind,severity,transaction_id,user_id,product_id,suggested_action,assignee,created_at,store"
                print(header, terminator: "\r\n")
                for item in result.items {
                    let fields = [
                        String(item.id), item.status.rawValue, item.kind.rawValue, item.severity.rawValue,
                        item.transactionID ?? "",
                        item.userID ?? "", item.productID ?? "", item.suggestedAction.rawValue, item.assignee ?? "",
                        TimeExpression.format(item.createdAt), item.store.rawValue,
                    ]
                    print(fields.map(ReportWriter.csvField).joined(separator: ","), terminator: "\r\n")
                }
            case .table:
                guard !result.items.isEmpty else {
                    print("no review items match (\(result.total) in all)")
                    return
                }
                print(ReviewOutput.table(
                    header: [
                        "ID", "STATUS", "SEVERITY", "KIND", "STORE", "TRANSACTION", "USER", "PRODUCT", "ASSIGNEE", "DETECTED",
                    ],
                    rows: result.items.map { (item: ReviewItem) -> [String] in
                        [String(item.id), item.status.rawValue, item.severity.rawValue, item.kind.rawValue, item.store.rawValue,
                         item.transactionID ?? "—",
                         item.userID ?? "—", item.productID ?? "—", item.assignee ?? "",
                         String(TimeExpression.format(item.createdAt).prefix(10))]
                    },
                    widths: [6, 17, 8, 20, 11, 22, 18, 16, 12, 10]))
                print("page \(result.page) of \(result.pageCount), \(result.total) items")
            }
        }
    }
}
