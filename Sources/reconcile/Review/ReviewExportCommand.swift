import ArgumentParser
import Foundation
import Reconciliation

/// `reconcile review export [filters] [--output FILE]`: every matching item as CSV.
struct ReviewExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the review items matching a filter as CSV (all pages).",
        discussion: "Fields that a spreadsheet would run as a formula are defused with a leading quote."
    )

    @OptionGroup var filter: ReviewFilterOptions
    @OptionGroup var database: ReviewDatabaseOptions

    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
    var output: String?

    func run() async throws {
        let logger = database.common.makeLogger()
        do {
            let queue = try await database.queue()
            let filter = try filter.filter()
            if let output {
                // Written beside the target and renamed, so a reader never sees half a file.
                let temporary = output + ".partial"
                guard FileManager.default.createFile(atPath: temporary, contents: nil),
                    let handle = FileHandle(forWritingAtPath: temporary)
                else { throw ValidationError("--output \(output): cannot write there") }
                do {
                    try queue.exportCSV(filter) { try handle.write(contentsOf: Data($0.utf8)) }
                    try handle.close()
                    _ = try? FileManager.default.removeItem(atPath: output)
                    try FileManager.default.moveItem(atPath: temporary, toPath: output)
                } catch {
                    try? handle.close()
                    try? FileManager.default.removeItem(atPath: temporary)
                    throw error
                }
            } else {
                try queue.exportCSV(filter) { FileHandle.standardOutput.write(Data($0.utf8)) }
            }
        } catch let error as ValidationError {
            throw error
        } catch {
            throw report(error, logger: logger)
        }
    }
}
