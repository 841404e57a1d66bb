import ArgumentParser
import Foundation
import Postgres
import Reconciliation

/// `reconcile review approval-threshold [--set CUR=N,… | --clear]`: the approval threshold recorded
/// in the database (SPEC section 17), which every decision applies together with its own setting.
struct ReviewApprovalThresholdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approval-threshold",
        abstract: "Show, replace or remove the approval threshold recorded in the database.",
        discussion: """
            Every process configured with RECONCILE_APPROVAL_ABOVE (run, serve, notifications receive, migrate, \
            and each decision) records it in reconcile.approval_thresholds where it is stricter than what is \
            recorded, and every decision applies the stricter of its own setting and the recorded one: a shell \
            or a server started without the setting cannot skip approval. A process never raises or removes a \
            recorded limit; this command does (an operator's act, needing DELETE on the table: run it as the \
            schema's owner). Without options it prints the recorded threshold and this shell's. --set replaces \
            the recorded threshold with the one given (e.g. CNY=1000,USD=150); --clear removes it. A process \
            still configured with a stricter threshold records its own again when it next starts or decides: \
            change RECONCILE_APPROVAL_ABOVE everywhere first.
            """
    )

    @Option(help: "Replace the recorded threshold: amounts per currency in major units (CNY=1000,USD=150).")
    var set: String?

    @Flag(help: "Remove the recorded threshold.")
    var clear = false

    @OptionGroup var database: ReviewDatabaseOptions

    func validate() throws {
        if set != nil, clear { throw ValidationError("give --set or --clear, not both") }
        if let set, ApprovalThreshold(parsing: set) == nil {
            throw ValidationError("--set \(set): expected amounts per currency in major units, such as CNY=648,USD=99")
        }
    }

    func run() async throws {
        try await database.run { logger in
            let settings = try await database.settings()
            let connection = try settings.connect()
            try Schema.requireUpToDate(connection)
            let process = ApprovalThreshold.process("review approval-threshold", login: OperatingSystemLogin.current())
            if clear || set != nil {
                let threshold = set.flatMap(ApprovalThreshold.init(parsing:)) ?? .none
                try ApprovalThreshold.replaceRecorded(with: threshold, on: connection, by: process)
                logger.notice(
                    "approval threshold recorded replaced",
                    metadata: ["approval.threshold": "\(threshold.isEnabled ? threshold.description : "none")",
                               "process": "\(process)"])
                print(threshold.isEnabled ? "recorded approval threshold: \(threshold)" : "no approval threshold recorded")
            }
            let limits = try ApprovalThreshold.recordedLimits(on: connection)
            if limits.isEmpty { print("recorded: none") }
            for limit in limits {
                print("recorded: \(Money(milli: limit.aboveMilli, currency: limit.currency).text()) "
                    + "(\(TimeExpression.format(limit.recordedAt)) by \(terminalSafe(limit.recordedBy)))")
            }
            let own = settings.approvalAbove
            print("this shell's RECONCILE_APPROVAL_ABOVE: \(own.isEnabled ? own.description : "unset")")
            let inForce = own.stricter(ApprovalThreshold(
                milliByCurrency: Dictionary(limits.map { ($0.currency, $0.aboveMilli) }) { $1 }))
            print("in force for a decision from this shell: \(inForce.isEnabled ? inForce.description : "none")")
        }
    }
}
