import AppStore
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// How to run the simulator.
public struct SimulatorConfiguration: Sendable {
    /// Address to listen on; loopback by default, the simulator is not meant to be reachable.
    public var host: String
    /// Port to listen on; 0 picks a free one (tests).
    public var port: Int
    /// Where the CA's keys and certificates live; nil keeps a fresh CA in memory (tests).
    public var stateDirectory: URL?
    /// When set, verifyReceipt answers `21004` to a request whose `password` differs.
    public var sharedSecret: String?
    /// Faults in force at start.
    public var faults: SimulatorFaults
    /// The simulator's own log.
    public var logger: Logger
    /// The Server API key id tokens must carry (`kid`).
    public var apiKeyID: String
    /// The issuer id tokens must carry (`iss`).
    public var issuerID: String
    /// The key whose tokens the Server API accepts; nil generates one (in the state directory
    /// as `api-key.p8` when there is one, so the job can read it).
    public var apiKey: SimulatorAPIKey?
    /// Bundle ids a token may name (`bid`); empty accepts any.
    public var apiBundleIDs: Set<String>
    /// Signed transactions per page of the paged Server API endpoints (Apple: 20).
    public var pageSize: Int
    /// The `appAppleId` of production data (Apple leaves it out of sandbox data).
    public var appAppleId: Int64
    /// Serve `POST /sim/prepared-answers` and answer the receipts it was given from there.
    public var preparedAnswers: Bool
    /// Where every notification made is POSTed, as Apple posts to the URL set in App Store
    /// Connect; nil posts none (``AppStoreSimulator/poster`` can set it later).
    public var notificationURL: String?
    /// The factor applied to Apple's retry waits (1, 12, 24, 48, 72 hours); 0.001 makes an hour 3.6 s.
    public var notificationRetryScale: Double
    /// The Google Play apps whose licence keys the printed settings name (`GOOGLE_PLAY_PACKAGE_NAMES`);
    /// empty: ``PlaySimulator/defaultPackageNames``.
    public var playPackageNames: [String]
    /// Where Real-time developer notifications are pushed when a request names no URL.
    public var playPushURL: String?
    /// How long a stop of ``AppStoreSimulator/withRunning(_:)`` waits for the answers in flight
    /// before cancelling them.
    public var stopGrace: Duration

    /// Creates a configuration.
    public init(
        host: String = "127.0.0.1", port: Int = 0, stateDirectory: URL? = nil, sharedSecret: String? = nil,
        faults: SimulatorFaults = .none, logger: Logger = Logger(label: "appstore-sim"),
        apiKeyID: String = SimulatorAPIKey.defaultKeyID, issuerID: String = SimulatorAPIKey.defaultIssuerID,
        apiKey: SimulatorAPIKey? = nil, apiBundleIDs: Set<String> = [], pageSize: Int = 20,
        appAppleId: Int64 = 1_234_567_890, preparedAnswers: Bool = false, notificationURL: String? = nil,
        notificationRetryScale: Double = 1, playPackageNames: [String] = [], playPushURL: String? = nil,
        stopGrace: Duration = .seconds(10)
    ) {
        self.host = host
        self.port = port
        self.stateDirectory = stateDirectory
        self.sharedSecret = sharedSecret
        self.faults = faults
        self.logger = logger
        self.apiKeyID = apiKeyID
        self.issuerID = issuerID
        self.apiKey = apiKey
        self.apiBundleIDs = apiBundleIDs
        self.pageSize = max(1, pageSize)
        self.appAppleId = appAppleId
        self.preparedAnswers = preparedAnswers
        self.notificationURL = notificationURL
        self.notificationRetryScale = max(0, notificationRetryScale)
        self.playPackageNames = playPackageNames
        self.playPushURL = playPushURL
        self.stopGrace = stopGrace
    }
}

/// The local App Store simulator used by the demo and the tests; production never uses it.
///
/// Endpoints (one port; production and sandbox differ by path, as Apple's differ by host):
/// - `POST /verifyReceipt`: production verifyReceipt; `21007` for a sandbox receipt.
/// - `POST /sandbox/verifyReceipt`: sandbox verifyReceipt; `21008` for a production receipt.
/// - `POST /sim/receipts`: issue a signed PKCS#7 receipt from a ``SimulatedReceipt`` JSON body.
/// - `GET|POST|DELETE /sim/faults`: read, replace, clear the ``SimulatorFaults``.
/// - `GET|DELETE /sim/stats`: read, reset the ``SimulatorStats``; `GET /sim/stats/receipts`: the
///   verifyReceipt requests per receipt (``ReceiptRequestCounts``).
/// - `GET /sim/root.pem`: the CA root to trust.
/// - Server API (production at the root, sandbox under `/sandbox`, as Apple's hosts differ):
///   `GET /inApps/v2/history/{id}`, `GET /inApps/v1/transactions/{id}`,
///   `GET /inApps/v2/refund/lookup/{id}`, `GET /inApps/v1/lookup/{orderId}`, with token checks.
/// - `POST /sim/transactions`: create a signed purchase from a ``SimulatedTransaction`` body;
///   `POST /sim/transactions/{id}/refund` and `/reverse`: refund it, reverse the refund.
/// - `POST /sim/prepared-answers` (with ``SimulatorConfiguration/preparedAnswers``): judge the
///   receipts of the body (base64, one a line) now, and answer verifyReceipt for them from that.
/// - `POST /sim/notifications`: sign a Notification V2 about a transaction (`delivered: false`: the
///   app's endpoint missed it); `POST /inApps/v1/notifications/history` serves what was signed.
/// - `PUT /inApps/v2/transactions/consumption/{id}`: Send Consumption Information V2, recorded
///   in ``notifications``.
/// - With a notification URL (``SimulatorConfiguration/notificationURL``, or
///   `PUT /sim/notification-url`), every notification made is POSTed there as Apple does, retried
///   on Apple's schedule, each attempt in its `sendAttempts` (``SimulatorNotificationPoster``).
/// - Google Play on the same port: `POST /token`, the Developer API under `/androidpublisher/v3/`,
///   admin under `/sim/play/` (``addGooglePlayRoutes(to:)``, ``PlaySimulator``).
public struct AppStoreSimulator: Sendable {
    /// The configuration it runs with.
    public let configuration: SimulatorConfiguration
    /// Its certificate authority.
    public let ca: SimulatorCA
    /// Its faults and counters.
    public let state: SimulatorState
    /// The key whose tokens the Server API accepts.
    public let apiKey: SimulatorAPIKey
    /// The purchases the Server API serves.
    public let transactions: SimulatorTransactionStore
    /// verifyReceipt answers judged ahead, when the configuration asks for them.
    let preparedAnswers: PreparedAnswers?
    /// The notifications it sent and the consumption answers it received.
    public let notifications: SimulatorNotificationLog
    /// Posts the notifications it makes to the app's notification URL.
    public let poster: SimulatorNotificationPoster
    /// Its Google Play (``addGooglePlayRoutes(to:)``).
    public let play: PlaySimulator

    /// Loads (or creates) the CA and sets up the state.
    public init(configuration: SimulatorConfiguration) throws {
        self.configuration = configuration
        if let directory = configuration.stateDirectory {
            ca = try SimulatorCA.loadOrCreate(stateDirectory: directory)
        } else {
            ca = try SimulatorCA.generate()
        }
        state = SimulatorState(faults: configuration.faults)
        if let key = configuration.apiKey {
            apiKey = key
        } else if let directory = configuration.stateDirectory {
            apiKey = try SimulatorAPIKey.loadOrCreate(
                stateDirectory: directory, keyID: configuration.apiKeyID, issuerID: configuration.issuerID)
        } else {
            apiKey = SimulatorAPIKey.generate(keyID: configuration.apiKeyID, issuerID: configuration.issuerID)
        }
        transactions = SimulatorTransactionStore()
        preparedAnswers = configuration.preparedAnswers ? PreparedAnswers() : nil
        let log = SimulatorNotificationLog()
        notifications = log
        poster = SimulatorNotificationPoster(
            url: configuration.notificationURL, retryScale: configuration.notificationRetryScale,
            attemptTimeout: .seconds(10), log: log, logger: configuration.logger)
        play = PlaySimulator(
            packageNames: configuration.playPackageNames, stateDirectory: configuration.stateDirectory,
            host: configuration.host, pushURL: configuration.playPushURL, logger: configuration.logger)
    }

    /// The `.p8` file the job should use (`APPSTORE_PRIVATE_KEY_FILE`), when the key is on disk.
    public var apiPrivateKeyPath: String? {
        guard configuration.apiKey == nil else { return nil }
        return configuration.stateDirectory?.appendingPathComponent(SimulatorAPIKey.privateKeyFileName).path
    }

    /// The root certificate file to trust (`APPLE_ROOT_CERTIFICATES`), when the CA is on disk.
    public var rootCertificatePath: String? {
        configuration.stateDirectory?.appendingPathComponent(SimulatorCA.FileName.rootCertificate).path
    }

    /// The seam `appstore-sim` and the tests start: the simulator as a Hummingbird application.
    public static func buildApplication(
        configuration: SimulatorConfiguration, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        try AppStoreSimulator(configuration: configuration).buildApplication(onServerRunning: onServerRunning)
    }

    /// This simulator as a Hummingbird application; `onServerRunning` gets the bound port.
    public func buildApplication(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        let router = Router(context: BasicRequestContext.self)
        let simulator = self
        router.post("verifyReceipt") { request, _ in
            await simulator.verifyReceipt(request, endpoint: .production)
        }
        router.post("sandbox/verifyReceipt") { request, _ in
            await simulator.verifyReceipt(request, endpoint: .sandbox)
        }
        // Apple answers 21000 when the request is not a POST.
        router.get("verifyReceipt") { _, _ in Self.json(["status": 21000]) }
        router.get("sandbox/verifyReceipt") { _, _ in Self.json(["status": 21000]) }
        router.post("sim/receipts") { request, _ in
            await simulator.createReceipt(request)
        }
        router.get("sim/faults") { _, _ in Self.json(encoding: simulator.state.faults) }
        router.post("sim/faults") { request, _ in
            await simulator.setFaults(request)
        }
        router.delete("sim/faults") { _, _ in
            simulator.state.faults = .none
            return Self.json(encoding: simulator.state.faults)
        }
        router.get("sim/stats") { _, _ in Self.json(encoding: simulator.state.stats) }
        router.get("sim/stats/receipts") { _, _ in Self.json(encoding: simulator.state.receiptRequests) }
        router.delete("sim/stats") { _, _ in
            simulator.state.resetStats()
            return Self.json(encoding: simulator.state.stats)
        }
        router.get("sim/root.pem") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/x-pem-file"],
                body: .init(byteBuffer: ByteBuffer(string: simulator.ca.rootPEM)))
        }
        router.get("health") { _, _ in Self.json(["status": "ok"]) }
        addServerAPIRoutes(to: router)
        addNotificationRoutes(to: router)
        addTransactionAdminRoutes(to: router)
        if preparedAnswers != nil { addPreparedAnswerRoutes(to: router) }
        addGooglePlayRoutes(to: router)

        return Application(
            router: router,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "appstore-sim"),
            onServerRunning: { [play = self.play] channel in
                let port = channel.localAddress?.port ?? 0
                // The service account's token_uri names the bound port.
                play.serverDidStart(port: port)
                await onServerRunning(port)
            },
            logger: configuration.logger)
    }

    // MARK: - Issuing receipts

    /// Issues a signed PKCS#7 receipt: the base64 a client would upload, and the receipt with
    /// every default (transaction ids, dates) filled in.
    public func issueReceipt(_ receipt: SimulatedReceipt) throws -> (receiptData: String, receipt: SimulatedReceipt) {
        let completed = receipt.completed(now: Date(), nextTransactionID: state.nextTransactionID)
        let payload = try SimulatorReceiptCodec.payload(for: completed)
        let signed = try ca.signReceipt(payload: payload)
        state.countReceiptCreated()
        return (Data(signed).base64EncodedString(), completed)
    }

    private struct IssuedReceipt: Encodable {
        var receiptData: String
        var receipt: SimulatedReceipt
        enum CodingKeys: String, CodingKey {
            case receiptData = "receipt_data"
            case receipt
        }
    }

    private func createReceipt(_ request: Request) async -> Response {
        do {
            var request = request
            let body = try await request.collectBody(upTo: 4 << 20)
            let receipt = try JSONDecoder().decode(SimulatedReceipt.self, from: Data(body.readableBytesView))
            let issued = try issueReceipt(receipt)
            return Self.json(encoding: IssuedReceipt(receiptData: issued.receiptData, receipt: issued.receipt))
        } catch {
            return Self.json(["error": "\(error)"], status: .badRequest)
        }
    }

    private func setFaults(_ request: Request) async -> Response {
        do {
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            let faults =
                body.readableBytes == 0
                ? SimulatorFaults.none : try JSONDecoder().decode(SimulatorFaults.self, from: Data(body.readableBytesView))
            state.faults = faults
            configuration.logger.info("faults set", metadata: ["faults": "\(faults)"])
            return Self.json(encoding: faults)
        } catch {
            return Self.json(["error": "\(error)"], status: .badRequest)
        }
    }

    // MARK: - Faults, before either API answers

    /// Acts out the fault drawn for a request, after its drawn latency: returns the response that
    /// stands in for Apple's (`answer` names it for the stats), or nil to answer as usual. Each API's
    /// draw yields only its own faults: `status` is verifyReceipt's, `http429` and `apiError` the
    /// Server API's; `truncatedJSON` is the endpoint's answer cut short.
    func actOut(
        _ action: SimulatorFaults.Action, after latency: Duration, truncatedJSON: String, answer: inout String
    ) async throws -> Response? {
        if latency > .zero { try await Task.sleep(for: latency) }
        switch action {
        case .none:
            return nil
        case .hang(let duration):
            answer = "hang"
            // A hang outlives the client's timeout; answering afterwards is what a slow Apple does.
            // A stop of the simulator ends it.
            try await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
            return nil
        case .stalledBody(let duration):
            answer = "stalled_body"
            // The head promises 4,096 bytes; one comes, then nothing until the connection closes.
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(contentLength: 4096) { writer in
                    try await writer.write(ByteBuffer(string: "{"))
                    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
                    throw CancellationError()
                })
        case .http503:
            answer = "http_503"
            return Self.text("Service Unavailable", status: .serviceUnavailable)
        case .malformed:
            answer = "malformed"
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: truncatedJSON)))
        case .status(let status, let isRetryable):
            answer = String(status)
            var body: [String: any Sendable] = ["status": status]
            if let isRetryable { body["is_retryable"] = isRetryable }
            return Self.json(body)
        case .http429(let milliseconds):
            answer = "http_429"
            // Apple's Retry-After is an instant in epoch milliseconds, not a delay.
            let until = Date().millisecondsSince1970 + Int64(milliseconds)
            var response = Self.apiError(4_290_000, "Rate limit exceeded.")
            response.headers[.retryAfter] = String(until)
            return response
        case .apiError(let code):
            answer = String(code)
            return Self.apiError(code, "Simulated error.")
        }
    }

    // MARK: - verifyReceipt

    private struct VerifyRequest: Decodable {
        var receiptData: String?
        var password: String?
        enum CodingKeys: String, CodingKey {
            case receiptData = "receipt-data"
            case password
        }
    }

    private func verifyReceipt(_ request: Request, endpoint: SimulatedReceipt.Environment) async -> Response {
        let (latency, action) = state.beginVerifyRequest(endpoint: endpoint == .production ? "production" : "sandbox")
        var answer = "cancelled"
        defer { state.endVerifyRequest(answer: answer) }
        do {
            let truncated = #"{"status":0,"environment":"Sandbox","receipt":{"bundle_id":"#
            if let fault = try await actOut(action, after: latency, truncatedJSON: truncated, answer: &answer) {
                return fault
            }
            var request = request
            let body = try await request.collectBody(upTo: 16 << 20)
            let (status, response) = await answerVerifyReceipt(Data(body.readableBytesView), endpoint: endpoint)
            if answer == "cancelled" { answer = String(status) }
            return response
        } catch {
            return Response(status: .internalServerError)
        }
    }

    /// Apple's answer to a well-formed request: decode, authenticate, route, check the secret.
    private func answerVerifyReceipt(_ body: Data, endpoint: SimulatedReceipt.Environment) async -> (Int, Response) {
        guard let request = try? JSONDecoder().decode(VerifyRequest.self, from: body),
            let receiptData = request.receiptData
        else { return (21002, Self.json(["status": 21002])) }
        state.countReceiptRequest(receiptData, endpoint: endpoint == .production ? "production" : "sandbox")
        let compact = Self.compact(receiptData)
        let judgement: ReceiptJudgement
        if let prepared = preparedAnswers?.judgement(of: compact) {
            judgement = prepared
        } else {
            judgement = await judge(compact, now: Date())
        }
        switch judgement {
        case .refused(let code):
            return (code, Self.json(["status": code]))
        case .unanswerable:
            return (0, Response(status: .internalServerError))
        case .genuine(let environment, let json):
            func status(_ code: Int) -> (Int, Response) { (code, Self.json(["status": code])) }
            if environment == .sandbox && endpoint == .production { return status(21007) }
            if environment == .production && endpoint == .sandbox { return status(21008) }
            if let secret = configuration.sharedSecret, request.password != secret { return status(21004) }
            return (0, Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: json))))
        }
    }

    /// What verifyReceipt makes of a receipt, before routing and the shared secret.
    enum ReceiptJudgement: Sendable {
        /// 21002 (not a receipt) or 21003 (not signed by the simulator's CA).
        case refused(Int)
        /// The receipt's environment and its status-0 answer.
        case genuine(SimulatedReceipt.Environment, json: Data)
        /// The answer could not be encoded.
        case unanswerable
    }

    /// Reads, authenticates and answers a receipt (`compact`: its base64 without whitespace):
    /// the simulator's CPU per verifyReceipt request, which prepared answers spend ahead.
    func judge(_ compact: String, now: Date) async -> ReceiptJudgement {
        guard let bytes = Data(base64Encoded: compact), bytes.first == 0x30 else {
            // Not base64, or an iOS 6 style plist receipt, which the simulator does not issue.
            return .refused(21002)
        }
        guard let parsed = try? AppReceipt(berEncoded: Array(bytes)),
            let receipt = try? SimulatorReceiptCodec.read(parsed)
        else { return .refused(21002) }
        guard await ca.isValidReceiptSignature(parsed, at: receipt.creationDate ?? Date()) else {
            return .refused(21003)
        }
        let encoder = JSONEncoder()
        // Apple writes slashes as they are ("America/Los_Angeles", the base64 of latest_receipt).
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(Self.verifiedReceipt(receipt, receiptData: compact, now: now)) else {
            return .unanswerable
        }
        return .genuine(receipt.environment, json: json)
    }

    /// Byte by byte: Character.isWhitespace over a receipt's kilobytes costs more than the rest
    /// of the answer.
    static func compact(_ receiptData: String) -> String {
        String(decoding: receiptData.utf8.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }, as: UTF8.self)
    }

    /// The status-0 answer, shaped like Apple's: `in_app` in receipt order, `latest_receipt_info`
    /// sorted by purchase date, `latest_receipt` for receipts with subscriptions.
    static func verifiedReceipt(_ receipt: SimulatedReceipt, receiptData: String, now: Date) -> VerifiedReceipt {
        let transactions = receipt.purchases.map { purchase in
            VerifiedReceipt.Transaction(
                transactionID: purchase.transactionID ?? "",
                originalTransactionID: purchase.originalTransactionID ?? purchase.transactionID,
                productID: purchase.productID,
                quantity: purchase.quantity ?? 1,
                purchaseDate: purchase.purchaseDate,
                originalPurchaseDate: purchase.originalPurchaseDate ?? purchase.purchaseDate,
                expiresDate: purchase.expiresDate,
                cancellationDate: purchase.cancellationDate,
                cancellationReason: purchase.cancellationDate == nil ? nil : "0",
                webOrderLineItemID: purchase.webOrderLineItemID.map(String.init),
                isTrialPeriod: purchase.expiresDate == nil ? nil : false,
                isInIntroOfferPeriod: purchase.expiresDate == nil ? nil : false,
                inAppOwnershipType: "PURCHASED")
        }
        let hasSubscriptions = receipt.purchases.contains { $0.expiresDate != nil }
        return VerifiedReceipt(
            status: 0,
            environment: receipt.environment.verified,
            bundleID: receipt.bundleID,
            applicationVersion: receipt.applicationVersion,
            originalApplicationVersion: receipt.originalApplicationVersion,
            receiptType: receipt.environment == .production ? "Production" : "ProductionSandbox",
            appItemID: "0",
            receiptCreationDate: receipt.creationDate,
            requestDate: now,
            originalPurchaseDate: receipt.purchases.map(\.purchaseDate).min(),
            inApp: transactions,
            latestReceiptInfo: transactions.sorted { $0.purchaseDate < $1.purchaseDate },
            latestReceipt: hasSubscriptions ? receiptData : nil)
    }

    // MARK: - JSON

    static func json(_ object: [String: any Sendable], status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func json(encoding value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
