import AppStore
import ArgumentParser
import Foundation
import Logging
import Reconciliation

struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode and verify one receipt, signed transaction or notification body and print it.",
        discussion: """
            FILE holds one of (- reads standard input):
            - a StoreKit 2 JWS (a signed transaction, renewal info or notification signedPayload), verified \
            locally: ES256, the x5c chain to the trusted roots at its signedDate, Apple's OIDs, the environment;
            - a notification body as Apple POSTs it, {"signedPayload": "…"}, verified with its nested signed data;
            - a base64 app receipt (StoreKit 1) exactly as a client uploads it. It is verified with verifyReceipt \
            at APPLE_VERIFY_RECEIPT_URL (default Apple's production endpoint), falling over to \
            APPLE_VERIFY_RECEIPT_SANDBOX_URL on 21007, with APPLE_SHARED_SECRET as the password when set; with \
            --offline it is parsed here and its signature chain checked at its creation date instead.

            Trusted roots: APPLE_ROOT_CERTIFICATES (comma list of DER/PEM files) or the bundled Apple roots. \
            Bundle ids: RECONCILE_BUNDLE_IDS when set, else the input's own is accepted.

            Exit codes: 0 it verifies; 1 it is invalid (the reason is printed) or Apple could not be asked; \
            64 bad usage or configuration (including a shared secret Apple rejects).
            """
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "File with the receipt, JWS or notification body, or - for standard input.")
    var file: String

    @Flag(help: "Print the decoded data as JSON with Apple's field names.")
    var json = false

    @Flag(help: "Decode a receipt and check its signature chain locally instead of asking Apple.")
    var offline = false

    func run() async throws {
        let logger = common.makeLogger()
        do {
            // The same settings as `run` (environment over --config), bundle ids optional here.
            let settings = try await ConfigurationLoader.settings(configFile: nil, requireBundleIDs: false)
            let text = try readInput()
            switch try InspectInput(text: text) {
            case .appReceipt(let receiptData):
                let untrusted = UntrustedDecoding.receipt(receiptData)
                if offline {
                    try show(await inspector(settings).inspectReceipt(receiptData), untrusted: untrusted)
                } else {
                    let configuration = AppleServices.receiptConfiguration(settings)
                    let outcome = try await VerifyReceiptClient.withClient(configuration: configuration) { client in
                        try await client.verify(receiptData: receiptData, logger: logger)
                    }
                    try show(outcome, untrusted: untrusted)
                }
            case .signedData(let token):
                try show(await inspector(settings).inspectSignedData(token), untrusted: UntrustedDecoding.signedData(token))
            }
        } catch let error as VerifyReceiptConfigurationError {
            throw report(ConfigurationError(error.description), logger: logger)
        } catch let error as RunConfigurationError {
            throw report(ConfigurationError(error.description), logger: logger)
        } catch let error as ConfigurationError {
            throw report(error, logger: logger)
        }
    }

    /// The local verifier: the run's trusted roots; the configured bundle ids when set, else the
    /// input's own.
    private func inspector(_ settings: Settings) throws -> SignedDataInspector {
        SignedDataInspector(
            trustedRoots: try AppleServices.roots(settings),
            bundleIds: settings.bundleIDs.isEmpty ? nil : Set(settings.bundleIDs))
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

    private func show(_ result: SignedDataInspector.Result, untrusted: [String: Any]?) throws {
        switch result {
        case .valid(let inspected):
            if json {
                Swift.print(String(decoding: try inspected.json(), as: UTF8.self))
            } else {
                Swift.print(SignedDataText.render(inspected))
            }
        case .invalid(let reason):
            emitFailure(valid: "invalid", status: nil, reason: reason, untrusted: untrusted)
            throw ExitStatus.failed
        }
    }

    private func show(_ outcome: VerifyReceiptOutcome, untrusted: [String: Any]?) throws {
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
            emitFailure(valid: "invalid", status: status, reason: reason, untrusted: untrusted)
            throw ExitStatus.failed
        case .retryLater(let reason, let status):
            emitFailure(
                valid: "unverified", status: status, reason: "Apple could not verify it now: \(reason)", untrusted: untrusted)
            throw ExitStatus.failed
        }
    }

    /// A failure still shows what the input decodes to, marked untrusted (SPEC section 7).
    private func emitFailure(valid: String, status: Int?, reason: String, untrusted: [String: Any]?) {
        if json {
            var object: [String: Any] = ["result": valid, "reason": reason, "trusted": false]
            if let status { object["status"] = status }
            object["decoded"] = orNull(untrusted)
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) {
                Swift.print(String(decoding: data, as: UTF8.self))
            }
        } else {
            Swift.print("\(valid): \(reason)" + (status.map { " (status \($0))" } ?? ""))
            if let untrusted, let data = try? JSONSerialization.data(
                withJSONObject: untrusted, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            {
                Swift.print("\nUNTRUSTED — what it decodes to, which nothing vouches for:")
                // The newlines are the layout's; anything else that could drive the terminal becomes `?`.
                Swift.print(String(decoding: data, as: UTF8.self).split(separator: "\n").map { terminalSafe(String($0)) }
                    .joined(separator: "\n"))
            }
        }
    }
}

/// What FILE holds, told apart by shape before anything is decoded.
enum InspectInput {
    /// A base64 PKCS#7 app receipt or iOS 6 transaction receipt.
    case appReceipt(String)
    /// A compact JWS or a notification body (`{"signedPayload": …}`).
    case signedData(String)

    init(text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw ConfigurationError("the file is empty") }
        switch SignedDataInspector.kind(of: trimmed) {
        case .jws, .notificationBody: self = .signedData(trimmed)
        case .receipt: self = .appReceipt(trimmed)
        }
    }
}

/// The human-readable form of verified StoreKit 2 data and offline receipts.
enum SignedDataText {
    static func render(_ inspected: SignedDataInspector.Inspected) -> String {
        switch inspected {
        case .transaction(let transaction):
            return (["verified signed transaction"] + lines(transaction)).joined(separator: "\n")
        case .renewalInfo(let info):
            return [
                "verified signed renewal info",
                "  environment:           \(info.environment?.rawValue ?? "-")",
                "  original transaction:  \(info.originalTransactionId ?? "-")",
                "  auto-renew product:    \(info.autoRenewProductId ?? "-")",
                "  signed:                \(stamp(info.signedDate))",
            ].joined(separator: "\n")
        case .notification(let notification):
            let payload = notification.payload
            var result = [
                "verified notification",
                "  type:          \(payload.notificationType?.rawValue ?? "-")"
                    + (payload.subtype.map { " / \($0.rawValue)" } ?? ""),
                "  uuid:          \(payload.notificationUUID ?? "-")",
                "  signed:        \(stamp(payload.signedDate))",
                "  environment:   \(payload.data?.environment?.rawValue ?? "-")",
                "  bundle id:     \(payload.data?.bundleId ?? "-")",
            ]
            if let transaction = notification.transaction {
                result.append("  signedTransactionInfo:")
                result += lines(transaction).map { "  " + $0 }
            }
            return result.joined(separator: "\n")
        case .receipt(let receipt):
            return ReceiptText.render(receipt, verifiedBy: "its signature chain (offline)")
        }
    }

    private static func lines(_ t: JWSTransaction) -> [String] {
        var lines = [
            "  transaction id:     \(t.transactionId ?? "-")",
            "  original id:        \(t.originalTransactionId ?? "-")",
            "  environment:        \(t.environment?.rawValue ?? "-")",
            "  bundle id:          \(t.bundleId ?? "-")",
            "  product:            \(t.productId ?? "-") (\(t.type?.rawValue ?? "-")) x\(t.quantity ?? 1)",
            "  purchased:          \(stamp(t.purchaseDate))",
            "  signed:             \(stamp(t.signedDate))",
        ]
        if let price = t.price { lines.append("  price:              \(price) milliunits \(t.currency ?? "")") }
        if let token = t.appAccountToken { lines.append("  app account token:  \(token.uuidString.lowercased())") }
        if let expires = t.expiresDate { lines.append("  expires:            \(stamp(expires))") }
        if let revoked = t.revocationDate {
            lines.append("  REVOKED:            \(stamp(revoked)) reason \(t.revocationReason?.rawValue ?? -1)")
        }
        return lines
    }

    private static func stamp(_ date: Date?) -> String { date?.formatted(.iso8601) ?? "-" }
}

/// The human-readable form of a verified receipt.
enum ReceiptText {
    static func render(_ receipt: VerifiedReceipt, verifiedBy: String? = nil) -> String {
        let legacy = receipt.isLegacyFormat ? ", iOS 6 style receipt" : ""
        var lines = [
            "verified by " + (verifiedBy ?? "verifyReceipt (status \(receipt.status)\(legacy))"),
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

/// What an input decodes to without any check: a JWS's payload (a notification's nested signed
/// data decoded beside it), an app receipt's contents. Shown only next to the reason it does not
/// verify, marked untrusted.
enum UntrustedDecoding {
    static func signedData(_ text: String) -> [String: Any]? {
        if let body = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let token = body["signedPayload"] as? String
        {
            return signedData(token)
        }
        guard var payload = jwsPayload(text) else { return nil }
        if var data = payload["data"] as? [String: Any] {
            if let token = data["signedTransactionInfo"] as? String { data["transactionInfo"] = jwsPayload(token) }
            if let token = data["signedRenewalInfo"] as? String { data["renewalInfo"] = jwsPayload(token) }
            payload["data"] = data
        }
        return payload
    }

    static func jwsPayload(_ token: String) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].utf8.count <= 1 << 20 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    /// An app receipt's contents through the one decoding every receipt has
    /// (`AppReceipt.Payload`'s verifyReceipt field names), dates as RFC 3339.
    static func receipt(_ base64: String) -> [String: Any]? {
        guard case .app(let receipt)? = try? Receipt(base64Encoded: base64) else { return nil }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(TimeExpression.format(date))
        }
        guard let data = try? encoder.encode(receipt.payload) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }
}

/// JSON's null for what is absent.
private func orNull(_ value: Any?) -> Any { value ?? NSNull() }
