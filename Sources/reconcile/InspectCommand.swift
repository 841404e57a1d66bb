import AppStore
import ArgumentParser
import Foundation
import Logging

struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode and verify one receipt and print it.",
        discussion: """
            FILE holds a base64 app receipt (StoreKit 1) exactly as a client uploads it; - reads standard input. \
            It is verified with verifyReceipt at APPLE_VERIFY_RECEIPT_URL (default Apple's production endpoint), \
            falling over to APPLE_VERIFY_RECEIPT_SANDBOX_URL on 21007, with APPLE_SHARED_SECRET as the password \
            when set.

            Exit codes: 0 the receipt verifies; 1 it is invalid (the reason is printed) or Apple could not be \
            asked; 64 bad usage or configuration (including a shared secret Apple rejects).
            """
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "File with the receipt, or - for standard input.")
    var file: String

    @Flag(help: "Print the decoded receipt as JSON with Apple's field names.")
    var json = false

    @Flag(help: "Decode and check the signature locally instead of asking Apple.")
    var offline = false

    func run() async throws {
        let logger = common.makeLogger()
        let outcome: VerifyReceiptOutcome
        do {
            let input = try InspectInput(text: readInput())
            switch input {
            case .appReceipt(let receiptData):
                if offline {
                    outcome = try await inspectOffline(receiptData: receiptData)
                } else {
                    let configuration = try VerifyReceiptClient.Configuration(environment: ProcessInfo.processInfo.environment)
                    outcome = try await VerifyReceiptClient.withClient(configuration: configuration) { client in
                        try await client.verify(receiptData: receiptData, logger: logger)
                    }
                }
            case .signedTransaction:
                throw ConfigurationError("inspecting a StoreKit 2 JWS is not available yet; FILE must hold a base64 app receipt")
            }
        } catch let error as VerifyReceiptConfigurationError {
            throw report(ConfigurationError(error.description), logger: logger)
        } catch let error as ConfigurationError {
            throw report(error, logger: logger)
        }
        try show(outcome)
    }

    /// The seam for `--offline`: decode the receipt locally and check its signature chain against
    /// APPLE_ROOT_CERTIFICATES, producing the same outcome type as verifyReceipt.
    private func inspectOffline(receiptData: String) async throws -> VerifyReceiptOutcome {
        throw ConfigurationError("--offline is not available yet: local receipt verification comes with the receipt parser")
    }

    private func readInput() throws -> String {
        do {
            let data =
                file == "-"
                ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw ConfigurationError("cannot read \(file): \(error.localizedDescription)")
        }
    }

    private func show(_ outcome: VerifyReceiptOutcome) throws {
        switch outcome {
        case .verified(let receipt):
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                Swift.print(String(decoding: try encoder.encode(receipt), as: UTF8.self))
            } else {
                Swift.print(ReceiptText.render(receipt))
            }
        case .invalid(let status, let reason):
            emitFailure(valid: "invalid", status: status, reason: reason)
            throw ExitStatus.failed
        case .retryLater(let reason, let status):
            emitFailure(valid: "unverified", status: status, reason: "Apple could not verify it now: \(reason)")
            throw ExitStatus.failed
        }
    }

    private func emitFailure(valid: String, status: Int?, reason: String) {
        if json {
            var object: [String: Any] = ["result": valid, "reason": reason]
            if let status { object["status"] = status }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) {
                Swift.print(String(decoding: data, as: UTF8.self))
            }
        } else {
            Swift.print("\(valid): \(reason)" + (status.map { " (status \($0))" } ?? ""))
        }
    }
}

/// What FILE holds, told apart by shape before anything is decoded.
enum InspectInput {
    /// A base64 PKCS#7 app receipt or iOS 6 transaction receipt.
    case appReceipt(String)
    /// A compact JWS (StoreKit 2 transaction or notification).
    case signedTransaction(String)

    init(text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw ConfigurationError("the file is empty") }
        if trimmed.split(separator: ".", omittingEmptySubsequences: false).count == 3 && !trimmed.contains("+") {
            self = .signedTransaction(trimmed)
        } else {
            self = .appReceipt(trimmed)
        }
    }
}

/// The human-readable form of a verified receipt.
enum ReceiptText {
    static func render(_ receipt: VerifiedReceipt) -> String {
        var lines = [
            "verified by verifyReceipt (status \(receipt.status)\(receipt.isLegacyFormat ? ", iOS 6 style receipt" : ""))",
            "  environment:  \(receipt.environment)",
            "  bundle id:    \(receipt.bundleID)",
        ]
        if let version = receipt.applicationVersion {
            lines.append(
                "  app version:  \(version)" + (receipt.originalApplicationVersion.map { " (first installed \($0))" } ?? ""))
        }
        if let created = receipt.receiptCreationDate { lines.append("  created:      \(timestamp(created))") }
        lines.append("  in_app: \(receipt.inApp.count), latest_receipt_info: \(receipt.latestReceiptInfo.count)")
        let transactions = receipt.transactions.sorted { $0.purchaseDate < $1.purchaseDate }
        lines.append("")
        lines.append(
            transactions.isEmpty
                ? "no transactions" : "\(transactions.count) transaction\(transactions.count == 1 ? "" : "s"):")
        for t in transactions {
            var line = "  \(t.transactionID)  \(t.productID)  x\(t.quantity)  purchased \(timestamp(t.purchaseDate))"
            if let original = t.originalTransactionID, original != t.transactionID { line += "  original \(original)" }
            if let expires = t.expiresDate { line += "  expires \(timestamp(expires))" }
            if let cancelled = t.cancellationDate { line += "  REFUNDED \(timestamp(cancelled))" }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    private static func timestamp(_ date: Date) -> String { date.formatted(.iso8601) }
}
