import AppStoreSimulator
import Foundation
import Testing

@testable import AppStore

/// The verifyReceipt client's routing and retry rules, against the simulator in this process.
@Suite struct VerifyReceiptClientTests {
    /// Line breaks and spaces clients add are dropped before sending, ASCII or not, exactly as
    /// `CharacterSet.whitespacesAndNewlines` would drop them.
    @Test(arguments: [
        "MIIT\r\nqwYJ\tKoZI hvcN\u{0B}AQcC\u{0C}oIIT", "MIIT\u{00A0}qwYJ\u{2028}KoZI\nhvcN",
        "  MIITqwYJKoZIhvcNAQcCoIIT==\n", "",
    ])
    func whitespaceIsDroppedAsCharacterSetSaysWhateverTheScript(_ upload: String) {
        let expected = String(upload.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
        let compacted = ReceiptPayloadCheck.compacted(upload)
        #expect(compacted == expected)
        #expect(!compacted.unicodeScalars.contains { CharacterSet.whitespacesAndNewlines.contains($0) })
    }

    @Test func aProductionReceiptVerifiesAtProductionWithEveryTransaction() async throws {
        try await withSimulator { sim in
            let issued = try sim.simulator.issueReceipt(.sample(.production))
            let outcome = try await VerifyReceiptClient.withClient(configuration: fastClientConfiguration(sim)) {
                try await $0.verify(receiptData: issued.receiptData, logger: silentLogger)
            }
            guard case .verified(let receipt) = outcome else {
                Issue.record("expected verified, got \(outcome)")
                return
            }
            #expect(receipt.environment == .production)
            #expect(receipt.bundleID == "com.example.coins")
            #expect(receipt.inApp.count == 2)
            #expect(receipt.latestReceiptInfo.count == 2)
            let coins = try #require(receipt.inApp.first { $0.productID == "coins_100" })
            #expect(coins.transactionID == "2000000000000001")
            #expect(coins.originalTransactionID == "2000000000000001")
            #expect(coins.quantity == 2)
            #expect(coins.purchaseDate == Date(timeIntervalSince1970: 1_763_800_000))
            let vip = try #require(receipt.inApp.first { $0.productID == "vip_month" })
            #expect(vip.originalTransactionID == "2000000000000000")
            #expect(vip.expiresDate == Date(timeIntervalSince1970: 1_766_300_000))
            #expect(vip.cancellationDate == Date(timeIntervalSince1970: 1_763_750_000))
            #expect(vip.webOrderLineItemID == "2000000000000100")
            let stats = try await SimulatorAdmin.stats(sim)
            #expect(stats.requestsByEndpoint == ["production": 1])
        }
    }

    @Test func aSandboxReceiptIsSentToTheSandboxAfter21007() async throws {
        try await withSimulator { sim in
            let issued = try sim.simulator.issueReceipt(.sample(.sandbox))
            let outcome = try await VerifyReceiptClient.withClient(configuration: fastClientConfiguration(sim)) {
                try await $0.verify(receiptData: issued.receiptData, logger: silentLogger)
            }
            guard case .verified(let receipt) = outcome else {
                Issue.record("expected verified, got \(outcome)")
                return
            }
            #expect(receipt.environment == .sandbox)
            let stats = try await SimulatorAdmin.stats(sim)
            #expect(stats.requestsByEndpoint == ["production": 1, "sandbox": 1])
            #expect(stats.answers == ["21007": 1, "0": 1])
            // Per receipt, by the SHA-256 of its text, as `GET /sim/stats/receipts` serves them.
            let perReceipt = try JSONDecoder().decode(
                ReceiptRequestCounts.self, from: try await SimulatorAdmin.send(sim, "GET", "/sim/stats/receipts", nil).body)
            #expect(perReceipt.requests == [ReceiptRequestCounts.key(issued.receiptData): ["production": 1, "sandbox": 1]])
            #expect(perReceipt.total(issued.receiptData) == 2 && perReceipt.untracked == 0)
        }
    }

    @Test func theSimulatorAnswers21008ForAProductionReceiptAtTheSandbox() async throws {
        try await withSimulator { sim in
            let production = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            let sandbox = try sim.simulator.issueReceipt(.sample(.sandbox)).receiptData
            func status(_ path: String, _ receipt: String) async throws -> Int? {
                let answer = try await SimulatorAdmin.send(sim, "POST", path, #"{"receipt-data":"\#(receipt)"}"#)
                return try VerifyReceiptResponse.decode(answer.body, answeredBy: .production).status
            }
            #expect(try await status("/sandbox/verifyReceipt", production) == 21008)
            #expect(try await status("/verifyReceipt", sandbox) == 21007)
            #expect(try await status("/sandbox/verifyReceipt", sandbox) == 0)
            #expect(try await status("/verifyReceipt", "not base64!") == 21002)
            #expect(try await status("/verifyReceipt", Data([0x30, 0x03, 0x02, 0x01, 0x00]).base64EncodedString()) == 21002)
        }
    }

    @Test(arguments: [(VerifiedReceipt.Environment.sandbox, 21008), (.production, 21007)])
    func routingStatusesSwitchEndpoints(from endpoint: VerifiedReceipt.Environment, status: Int) {
        let verdict = VerifyReceiptClient.classify(VerifyReceiptResponse(status: status), endpoint: endpoint)
        #expect(verdict == .reroute(endpoint == .sandbox ? .production : .sandbox))
        // The same status from the other endpoint is Apple contradicting itself, not a verdict.
        let other: VerifiedReceipt.Environment = endpoint == .sandbox ? .production : .sandbox
        guard case .retryLaterNow = VerifyReceiptClient.classify(VerifyReceiptResponse(status: status), endpoint: other)
        else {
            Issue.record("expected retry later")
            return
        }
    }

    /// What each status Apple may answer comes to, and how many requests it costs with a budget of 3.
    struct StatusCase: Sendable, CustomTestStringConvertible {
        enum Expected: Sendable { case invalid, retryLater, configurationError }
        var status: Int
        var isRetryable: Bool?
        var expected: Expected
        var requests: Int
        var testDescription: String { "\(status) is_retryable=\(isRetryable.map(String.init) ?? "-")" }
    }

    @Test(arguments: [
        StatusCase(status: 21002, expected: .retryLater, requests: 3),
        StatusCase(status: 21005, expected: .retryLater, requests: 3),
        StatusCase(status: 21009, expected: .retryLater, requests: 3),
        StatusCase(status: 21100, isRetryable: true, expected: .retryLater, requests: 3),
        StatusCase(status: 21199, isRetryable: true, expected: .retryLater, requests: 3),
        StatusCase(status: 21100, isRetryable: false, expected: .invalid, requests: 1),
        StatusCase(status: 21150, expected: .invalid, requests: 1),
        StatusCase(status: 21003, expected: .invalid, requests: 1),
        StatusCase(status: 21010, expected: .invalid, requests: 1),
        StatusCase(status: 21000, expected: .retryLater, requests: 1),
        StatusCase(status: 21004, expected: .configurationError, requests: 1),
    ])
    func eachStatusCode(_ c: StatusCase) async throws {
        var faults = SimulatorFaults(forcedStatus: c.status)
        faults.forcedIsRetryable = c.isRetryable
        try await withSimulator(faults: faults) { sim in
            let receipt = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            let result = await Result(asyncCatching: {
                try await VerifyReceiptClient.withClient(configuration: fastClientConfiguration(sim, maxAttempts: 3)) {
                    try await $0.verify(receiptData: receipt, logger: silentLogger)
                }
            })
            switch (c.expected, result) {
            case (.invalid, .success(.invalid(let status, _))):
                #expect(status == c.status)
            case (.retryLater, .success(.retryLater(_, let status))):
                #expect(status == c.status, "the status is kept so the caller can count 21002 across runs")
            case (.configurationError, .failure(let error)):
                let configurationError = try #require(error as? VerifyReceiptConfigurationError)
                #expect(configurationError.status == 21004)
            default:
                Issue.record("status \(c.status): expected \(c.expected), got \(result)")
            }
            #expect(try await SimulatorAdmin.stats(sim).verifyReceiptRequests == c.requests)
        }
    }

    struct FaultCase: Sendable, CustomTestStringConvertible {
        var name: String
        var faults: String
        var reason: String
        var testDescription: String { name }
    }

    @Test(arguments: [
        FaultCase(name: "HTTP 503", faults: #"{"http_503_share": 1}"#, reason: "HTTP 503"),
        FaultCase(name: "malformed JSON", faults: #"{"malformed_share": 1}"#, reason: "malformed"),
        FaultCase(name: "21005", faults: #"{"status_21005_share": 1}"#, reason: "21005"),
        FaultCase(name: "21100 retryable", faults: #"{"status_21100_retryable_share": 1}"#, reason: "21100"),
    ])
    func aRetryableFaultThatPersistsEndsAsRetryLaterNeverInvalid(_ c: FaultCase) async throws {
        try await withSimulator { sim in
            try await SimulatorAdmin.setFaults(sim, c.faults)
            let receipt = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            let outcome = try await VerifyReceiptClient.withClient(
                configuration: fastClientConfiguration(sim, maxAttempts: 4)
            ) { try await $0.verify(receiptData: receipt, logger: silentLogger) }
            guard case .retryLater(let reason, _) = outcome else {
                Issue.record("expected retry later, got \(outcome)")
                return
            }
            #expect(reason.contains(c.reason))
            #expect(reason.contains("after 4 attempts"))
            #expect(try await SimulatorAdmin.stats(sim).verifyReceiptRequests == 4)
        }
    }

    @Test(arguments: [
        #"{"http_503_share": 1, "requests": 2}"#, #"{"malformed_share": 1, "requests": 2}"#,
        #"{"status": 21002, "requests": 2}"#, #"{"status": 21009, "requests": 2}"#,
        #"{"hang_share": 1, "hang_ms": 6000, "requests": 1}"#,
    ])
    func aPassingFaultIsRetriedUntilItVerifies(faults: String) async throws {
        try await withSimulator { sim in
            try await SimulatorAdmin.setFaults(sim, faults)
            let receipt = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            // The deadline only has to be shorter than the hang: 400 ms failed healthy answers
            // when the whole suite loads the machine.
            let outcome = try await VerifyReceiptClient.withClient(
                configuration: fastClientConfiguration(sim, maxAttempts: 3, timeout: .seconds(2))
            ) { try await $0.verify(receiptData: receipt, logger: silentLogger) }
            guard case .verified = outcome else {
                Issue.record("expected verified after the fault passed, got \(outcome)")
                return
            }
        }
    }

    @Test func aHangHitsTheRequestTimeout() async throws {
        // Without the timeouts the two tries would take 120 s; a loaded machine has taken 4.7 s and
        // 8.2 s with them, so the bound leaves room and still tells the two apart.
        try await withSimulator(faults: .init(hangShare: 1, hangMilliseconds: 60_000)) { sim in
            let receipt = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            let started = ContinuousClock.now
            let outcome = try await VerifyReceiptClient.withClient(
                configuration: fastClientConfiguration(sim, maxAttempts: 2, timeout: .milliseconds(300))
            ) { try await $0.verify(receiptData: receipt, logger: silentLogger) }
            let elapsed = ContinuousClock.now - started
            guard case .retryLater(let reason, nil) = outcome else {
                Issue.record("expected retry later without a status, got \(outcome)")
                return
            }
            #expect(reason.contains("timed out"))
            #expect(elapsed < .seconds(40), "two 300 ms timeouts, not two 60 s hangs")
        }
    }

    /// Apple's `200` head announcing 4,096 bytes, one byte, then nothing (a stalled Apple, or a
    /// connection dropped after the head): the deadline covers the body too, so each try gives up
    /// at it. A deadline on the head alone waited for the whole 60 s stall each time.
    @Test func anAnswerThatStallsAfterItsHeadHitsTheRequestTimeout() async throws {
        try await withSimulator(faults: .init(hangMilliseconds: 60_000, stalledBodyShare: 1)) { sim in
            let receipt = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            let started = ContinuousClock.now
            let outcome = try await VerifyReceiptClient.withClient(
                configuration: fastClientConfiguration(sim, maxAttempts: 2, timeout: .seconds(1))
            ) { try await $0.verify(receiptData: receipt, logger: silentLogger) }
            let elapsed = ContinuousClock.now - started
            guard case .retryLater(let reason, nil) = outcome else {
                Issue.record("expected retry later without a status, got \(outcome)")
                return
            }
            #expect(reason.contains("timed out"), "\(reason)")
            #expect(try await SimulatorAdmin.stats(sim).verifyReceiptRequests == 2)
            #expect(elapsed < .seconds(20), "two 1 s deadlines, not two 60 s stalls")
        }
    }

    @Test(arguments: ["", "   ", "not base64 at all!", "aGVsbG8gd29ybGQ=", Data([0x00, 0x01]).base64EncodedString()])
    func aPayloadThatCannotBeAReceiptIsInvalidWithoutAskingApple(payload: String) async throws {
        try await withSimulator { sim in
            let outcome = try await VerifyReceiptClient.withClient(configuration: fastClientConfiguration(sim)) {
                try await $0.verify(receiptData: payload, logger: silentLogger)
            }
            guard case .invalid(nil, _) = outcome else {
                Issue.record("expected invalid without a status, got \(outcome)")
                return
            }
            #expect(try await SimulatorAdmin.stats(sim).verifyReceiptRequests == 0)
        }
    }

    @Test func aDERStructureThatIsNotPKCS7IsInvalidWithoutAskingApple() async throws {
        try await withSimulator { sim in
            let certificate = Data(sim.simulator.ca.rootDER).base64EncodedString()
            let outcome = try await VerifyReceiptClient.withClient(configuration: fastClientConfiguration(sim)) {
                try await $0.verify(receiptData: certificate, logger: silentLogger)
            }
            guard case .invalid(nil, let reason) = outcome else {
                Issue.record("expected invalid without a status, got \(outcome)")
                return
            }
            #expect(reason.contains("not a receipt"))
            #expect(try await SimulatorAdmin.stats(sim).verifyReceiptRequests == 0)
        }
    }

    @Test func aReceiptCutShortIsInvalidWithoutAskingApple() async throws {
        try await withSimulator { sim in
            let receipt = try #require(Data(base64Encoded: try sim.simulator.issueReceipt(.sample(.production)).receiptData))
            let truncated = receipt.prefix(receipt.count / 2).base64EncodedString()
            let outcome = try await VerifyReceiptClient.withClient(configuration: fastClientConfiguration(sim)) {
                try await $0.verify(receiptData: truncated, logger: silentLogger)
            }
            // Apple would answer 21002, retried for days before it counts: the signature cannot be there.
            #expect(outcome == .invalid(
                status: nil, reason: "receipt is truncated: its PKCS#7 container ends before the length it announces"))
            #expect(try await SimulatorAdmin.stats(sim).verifyReceiptRequests == 0)
        }
    }

    @Test func aWholeReceiptWhoseSignedContentIsCutIsStillLeftToApple() async throws {
        try await withSimulator { sim in
            let genuine = try AppReceipt(base64Encoded: try sim.simulator.issueReceipt(.sample(.production)).receiptData)
            let content = genuine.signedContent
            let signed = try sim.simulator.ca.signReceipt(payload: Array(content.prefix(content.count / 2)))
            #expect(throws: ReceiptParsingError.truncated) { try AppReceipt(berEncoded: signed) }
            let outcome = try await VerifyReceiptClient.withClient(configuration: fastClientConfiguration(sim)) {
                try await $0.verify(receiptData: Data(signed).base64EncodedString(), logger: silentLogger)
            }
            // A gap in the local parser must not make a receipt invalid: Apple (here the
            // simulator, answering 21002) decides, and the call leaves it for a later run.
            #expect(outcome == .retryLater(
                reason: "21002: the receipt data is malformed, or Apple had a temporary issue (after 3 attempts)",
                status: 21002))
            #expect(try await SimulatorAdmin.stats(sim).verifyReceiptRequests == 3)
        }
    }

    @Test func aReceiptSignedByAnotherCAIsInvalid21003() async throws {
        let stranger = try AppStoreSimulator(configuration: .init())
        let forged = try stranger.issueReceipt(.sample(.production)).receiptData
        try await withSimulator { sim in
            let outcome = try await VerifyReceiptClient.withClient(configuration: fastClientConfiguration(sim)) {
                try await $0.verify(receiptData: forged, logger: silentLogger)
            }
            #expect(outcome == .invalid(status: 21003, reason: "21003: the receipt could not be authenticated"))
        }
    }

    @Test func aLineWrappedUploadStillVerifies() async throws {
        try await withSimulator { sim in
            let receipt = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            var wrapped = ""
            for (index, character) in receipt.enumerated() {
                if index > 0 && index % 76 == 0 { wrapped += "\r\n" }
                wrapped.append(character)
            }
            let outcome = try await VerifyReceiptClient.withClient(configuration: fastClientConfiguration(sim)) {
                try await $0.verify(receiptData: wrapped + "\n", logger: silentLogger)
            }
            guard case .verified = outcome else {
                Issue.record("expected verified, got \(outcome)")
                return
            }
        }
    }

    @Test func theSharedSecretIsSentAsPassword() async throws {
        try await withSimulator(sharedSecret: "s3cret-right") { sim in
            let receipt = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            let right = try await VerifyReceiptClient.withClient(
                configuration: fastClientConfiguration(sim, sharedSecret: "s3cret-right")
            ) { try await $0.verify(receiptData: receipt, logger: silentLogger) }
            guard case .verified = right else {
                Issue.record("expected verified with the right secret, got \(right)")
                return
            }
            await #expect(throws: VerifyReceiptConfigurationError.self) {
                try await VerifyReceiptClient.withClient(
                    configuration: fastClientConfiguration(sim, sharedSecret: "s3cret-wrong")
                ) { try await $0.verify(receiptData: receipt, logger: silentLogger) }
            }
        }
    }

    @Test func concurrencyIsBoundedAndConnectionsShared() async throws {
        try await withSimulator(faults: .init(latencyMilliseconds: 40)) { sim in
            let receipts = try (0..<24).map { _ in try sim.simulator.issueReceipt(.sample(.production)).receiptData }
            let verified = try await VerifyReceiptClient.withClient(
                configuration: fastClientConfiguration(sim, concurrency: 4)
            ) { client in
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    for receipt in receipts {
                        group.addTask {
                            if case .verified = try await client.verify(receiptData: receipt, logger: silentLogger) {
                                return true
                            }
                            return false
                        }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
            }
            #expect(verified == 24)
            let stats = try await SimulatorAdmin.stats(sim)
            #expect(stats.maxInFlight <= 4)
            #expect(stats.maxInFlight >= 2, "requests did run in parallel")
        }
    }

    @Test func cancellationStopsAVerificationWaitingOnApple() async throws {
        try await withSimulator(faults: .init(hangShare: 1, hangMilliseconds: 10_000)) { sim in
            let receipt = try sim.simulator.issueReceipt(.sample(.production)).receiptData
            try await VerifyReceiptClient.withClient(
                configuration: fastClientConfiguration(sim, timeout: .seconds(30))
            ) { client in
                let task = Task { try await client.verify(receiptData: receipt, logger: silentLogger) }
                try await Task.sleep(for: .milliseconds(200))
                task.cancel()
                let result = await task.result
                #expect(throws: CancellationError.self) { try result.get() }
            }
        }
    }
}

extension Result where Failure == any Error {
    init(asyncCatching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// The request body is written directly when its text needs no escaping, else by `JSONEncoder`;
/// either way it is the same JSON object.
@Suite struct VerifyReceiptRequestBodyTests {
    @Test(arguments: [
        ("MIIT+/qwYJKoZI==", nil), ("MIIT", "0123456789abcdef"), ("MIIT", #"se"cr\et"#), ("MIIT\n", nil),
        ("caf\u{E9}", "p\u{7F}"), ("", ""),
    ] as [(String, String?)])
    func theBodyIsTheObjectJSONEncoderWrites(receipt: String, password: String?) throws {
        for exclude in [false, true] {
            let body = VerifyReceiptClient.RequestBody(
                receiptData: receipt, password: password, excludeOldTransactions: exclude)
            let written = try body.json()
            let read = try JSONDecoder().decode(VerifyReceiptClient.RequestBody.self, from: Data(written))
            #expect(read == body)
            let encoded = try JSONDecoder().decode(VerifyReceiptClient.RequestBody.self, from: JSONEncoder().encode(body))
            #expect(read == encoded)
        }
    }
}
