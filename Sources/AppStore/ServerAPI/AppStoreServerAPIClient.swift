import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// Asks the App Store Server API about transactions: Get Transaction History v2, Get
/// Transaction Info, Get Refund History and Look Up Order ID.
///
/// Every request carries a fresh ES256 token (``ServerAPIToken``) and waits its turn at a pacer
/// per environment. Production is asked first; `4040010` (transaction id not found) sends the
/// question to the sandbox, and not found in every environment is ``ServerAPIOutcome/notFound``.
/// `4040002`, `4040004`, `4040006`, `5000001`, HTTP 5xx, timeouts and connection errors are
/// retried with backoff and jitter, then ``ServerAPIOutcome/retryLater(reason:httpStatus:errorCode:)``;
/// HTTP 429 waits until its `Retry-After` (epoch milliseconds). HTTP 401 throws
/// ``ServerAPIConfigurationError``. Every signed transaction returned goes through the
/// ``SignedDataVerifier``; one that fails is reported, never trusted.
public struct AppStoreServerAPIClient: Sendable {
    /// Where and how to call the Server API.
    public struct Configuration: Sendable {
        /// Apple's production host.
        public static let appleProductionURL = "https://api.storekit.apple.com"
        /// Apple's sandbox host.
        public static let appleSandboxURL = "https://api.storekit-sandbox.apple.com"

        /// The key that signs the tokens.
        public var key: ServerAPIKey
        /// Production base URL (`APPSTORE_API_URL`).
        public var productionURL: String
        /// Sandbox base URL (`APPSTORE_API_SANDBOX_URL`).
        public var sandboxURL: String
        /// Environments asked, in order; the next one is asked when the previous answers `4040010`.
        public var environments: [AppStoreEnvironment]
        /// Production requests per second (`APPSTORE_API_RATE`; Apple allows 50 for most endpoints).
        public var productionRate: Double
        /// Sandbox requests per second (Apple allows a tenth of production).
        public var sandboxRate: Double
        /// Deadline of one HTTP exchange: connection, head and the whole body.
        public var requestTimeout: Duration
        /// Retries of one request.
        public var retry: RetryPolicy
        /// The longest `Retry-After` waited within a call; a longer one becomes `retryLater`.
        public var maxRetryAfter: Duration
        /// Pages read at most per call, against a server that says `hasMore` forever.
        public var maxPages: Int
        /// Requests in flight at once, and connections kept per host.
        public var maxConcurrentRequests: Int

        /// Creates a configuration; the defaults are Apple's hosts and rates.
        public init(
            key: ServerAPIKey,
            productionURL: String = Configuration.appleProductionURL,
            sandboxURL: String = Configuration.appleSandboxURL,
            environments: [AppStoreEnvironment] = [.production, .sandbox],
            productionRate: Double = 50,
            sandboxRate: Double = 5,
            requestTimeout: Duration = .seconds(30),
            retry: RetryPolicy = .init(),
            maxRetryAfter: Duration = .seconds(60),
            maxPages: Int = 10_000,
            maxConcurrentRequests: Int = 16
        ) {
            self.key = key
            self.productionURL = productionURL
            self.sandboxURL = sandboxURL
            self.environments = environments
            self.productionRate = productionRate
            self.sandboxRate = sandboxRate
            self.requestTimeout = requestTimeout
            self.retry = retry
            self.maxRetryAfter = maxRetryAfter
            self.maxPages = max(1, maxPages)
            self.maxConcurrentRequests = maxConcurrentRequests
        }
    }

    /// Filters of Get Transaction History v2, repeated unchanged on every page.
    public struct HistoryQuery: Sendable, Hashable {
        /// Only transactions purchased at or after this instant (`startDate`, epoch ms).
        public var startDate: Date?
        /// Only transactions purchased before this instant (`endDate`, epoch ms).
        public var endDate: Date?
        /// Only these product types: `AUTO_RENEWABLE`, `NON_RENEWABLE`, `CONSUMABLE`, `NON_CONSUMABLE`.
        public var productTypes: [String]
        /// Only revoked (`true`) or only unrevoked (`false`) transactions.
        public var revoked: Bool?
        /// `ASCENDING` (Apple's default) or `DESCENDING` by modification.
        public var sort: String?

        /// Creates a query; by default the customer's whole history.
        public init(
            startDate: Date? = nil, endDate: Date? = nil, productTypes: [String] = [], revoked: Bool? = nil,
            sort: String? = nil
        ) {
            self.startDate = startDate
            self.endDate = endDate
            self.productTypes = productTypes
            self.revoked = revoked
            self.sort = sort
        }

        var parameters: [(String, String)] {
            var parameters: [(String, String)] = []
            if let startDate { parameters.append(("startDate", String(startDate.millisecondsSince1970))) }
            if let endDate { parameters.append(("endDate", String(endDate.millisecondsSince1970))) }
            for type in productTypes { parameters.append(("productType", type)) }
            if let revoked { parameters.append(("revoked", String(revoked))) }
            if let sort { parameters.append(("sort", sort)) }
            return parameters
        }
    }

    /// The configuration the client was made with.
    public let configuration: Configuration
    /// Verifies every signed transaction returned.
    public let verifier: SignedDataVerifier
    private let httpClient: HTTPClient
    private let limiter: ConcurrencyLimiter
    private let productionPacer: RequestPacer
    private let sandboxPacer: RequestPacer

    /// Creates a client on a caller-owned `HTTPClient` (see ``makeHTTPClient(configuration:)``).
    public init(configuration: Configuration, verifier: SignedDataVerifier, httpClient: HTTPClient) {
        self.configuration = configuration
        self.verifier = verifier
        self.httpClient = httpClient
        limiter = ConcurrencyLimiter(limit: configuration.maxConcurrentRequests)
        productionPacer = RequestPacer(rate: configuration.productionRate)
        sandboxPacer = RequestPacer(rate: configuration.sandboxRate)
    }

    /// An `HTTPClient` sized for the configuration: no redirects (a token must not follow one).
    public static func makeHTTPClient(configuration: Configuration) -> HTTPClient {
        AppleHTTPClient.make(
            requestTimeout: configuration.requestTimeout, maxConcurrentRequests: configuration.maxConcurrentRequests)
    }

    /// Runs `body` with a client on its own `HTTPClient`, shut down afterwards.
    public static func withClient<T: Sendable>(
        configuration: Configuration, verifier: SignedDataVerifier, _ body: (AppStoreServerAPIClient) async throws -> T
    ) async throws -> T {
        try await AppleHTTPClient.using(makeHTTPClient(configuration: configuration)) { http in
            try await body(AppStoreServerAPIClient(configuration: configuration, verifier: verifier, httpClient: http))
        }
    }

    // MARK: - Endpoints

    /// Get Transaction History v2: every transaction of the customer who owns `transactionId`,
    /// refunds included, read page by page with `revision` and deduplicated by `transactionId`
    /// (newest `signedDate` wins).
    public func transactionHistory(
        for transactionId: String, query: HistoryQuery = HistoryQuery(), logger: Logger
    ) async throws -> ServerAPIOutcome<VerifiedTransactions> {
        try await pagedTransactions(
            path: "/inApps/v2/history/\(Self.escape(transactionId))", parameters: query.parameters,
            as: HistoryResponse.self, logger: logger
        ) { page in (page.signedTransactions ?? [], page.hasMore ?? false, page.revision) }
    }

    /// Get Refund History: the customer's refunded transactions, paged with `revision`.
    public func refundHistory(for transactionId: String, logger: Logger) async throws
        -> ServerAPIOutcome<VerifiedTransactions>
    {
        try await pagedTransactions(
            path: "/inApps/v2/refund/lookup/\(Self.escape(transactionId))", parameters: [],
            as: RefundHistoryResponse.self, logger: logger
        ) { page in (page.signedTransactions ?? [], page.hasMore ?? false, page.revision) }
    }

    /// Get Transaction Info: one transaction, verified.
    public func transactionInfo(for transactionId: String, logger: Logger) async throws
        -> ServerAPIOutcome<JWSTransaction>
    {
        let path = "/inApps/v1/transactions/\(Self.escape(transactionId))"
        return try await askingEachEnvironment(path: path, logger: logger) { body, _ in
            guard let response = try? JSONDecoder().decode(TransactionInfoResponse.self, from: body),
                let token = response.signedTransactionInfo
            else {
                return .retryLater(
                    reason: "Get Transaction Info answered without signedTransactionInfo", httpStatus: 200,
                    errorCode: nil)
            }
            switch await verifier.verifyTransaction(token) {
            case .valid(let transaction): return .found(transaction)
            case .invalid(let failure):
                logger.warning(
                    "Server API returned a signed transaction that does not verify", metadata: ["reason": "\(failure)"])
                return .unverifiable(failure)
            }
        }
    }

    /// Look Up Order ID: the transactions of the order on the customer's invoice email.
    public func lookUpOrder(_ orderId: String, logger: Logger) async throws -> ServerAPIOutcome<VerifiedTransactions> {
        let path = "/inApps/v1/lookup/\(Self.escape(orderId))"
        return try await askingEachEnvironment(path: path, logger: logger) { body, environment in
            guard let response = try? JSONDecoder().decode(OrderLookupResponse.self, from: body) else {
                return .retryLater(reason: "malformed Look Up Order ID response", httpStatus: 200, errorCode: nil)
            }
            // status 1: not an order of this app in this environment.
            guard response.status == 0 else { return nil }
            return .found(
                await verified(response.signedTransactions ?? [], environment: environment, pages: 1, logger: logger))
        }
    }

    /// Asks each configured environment in turn, production first, until one knows `path`:
    /// `4040010` (or `answer` returning nil) moves on to the next, a refusal or an outage ends the
    /// question, and not found anywhere is ``ServerAPIOutcome/notFound``.
    private func askingEachEnvironment<Value>(
        path: String, logger: Logger,
        answer: (Data, AppStoreEnvironment) async -> ServerAPIOutcome<Value>?
    ) async throws -> ServerAPIOutcome<Value> {
        for environment in configuration.environments {
            switch try await get(path: path, parameters: [], environment: environment, logger: logger) {
            case .notFoundHere:
                continue
            case .rejected(let code, let reason):
                return .rejected(errorCode: code, reason: reason)
            case .retryLater(let reason, let status, let code):
                return .retryLater(reason: reason, httpStatus: status, errorCode: code)
            case .answered(let body):
                if let outcome = await answer(body, environment) { return outcome }
            }
        }
        return .notFound
    }

    /// Get Notification History in one environment: every page, handed to `eachPage` as it
    /// arrives (so a 180-day first sync never sits in memory), until Apple says `hasMore` false.
    /// Returns the pages read. Apple puts `paginationToken` in the query and repeats the body.
    public func notificationHistory(
        _ request: NotificationHistoryRequest, environment: AppStoreEnvironment, logger: Logger,
        eachPage: ([NotificationHistoryRecord]) async throws -> Void
    ) async throws -> ServerAPIOutcome<Int> {
        let body = try AppStoreJSON.encoder().encode(request)
        var token: String?
        var pages = 0
        while true {
            var pageLogger = logger
            pageLogger[metadataKey: "apple.page"] = "\(pages + 1)"
            let exchange = try await self.request(
                .POST, path: "/inApps/v1/notifications/history",
                parameters: token.map { [("paginationToken", $0)] } ?? [], body: body, environment: environment,
                logger: pageLogger)
            switch exchange {
            case .notFoundHere:
                return .notFound
            case .rejected(let code, let reason):
                return .rejected(errorCode: code, reason: reason)
            case .retryLater(let reason, let status, let code):
                return .retryLater(reason: reason, httpStatus: status, errorCode: code)
            case .answered(let data):
                guard let page = try? AppStoreJSON.decoder().decode(NotificationHistoryResponse.self, from: data) else {
                    return .retryLater(
                        reason: "malformed page \(pages + 1) of Get Notification History", httpStatus: 200, errorCode: nil)
                }
                pages += 1
                try await eachPage(page.notificationHistory ?? [])
                guard page.hasMore == true else { return .found(pages) }
                guard let next = page.paginationToken, next != token else {
                    return .retryLater(
                        reason: "page \(pages) says hasMore without a new paginationToken", httpStatus: 200,
                        errorCode: nil)
                }
                guard pages < configuration.maxPages else {
                    return .retryLater(reason: "more than \(configuration.maxPages) pages", httpStatus: 200, errorCode: nil)
                }
                token = next
            }
        }
    }

    /// Send Consumption Information V2 (`PUT /inApps/v2/transactions/consumption/{transactionId}`):
    /// the answer to a refund request. Found (the HTTP status, 202) when Apple accepted it.
    public func sendConsumptionInformation(
        transactionId: String, _ consumption: ConsumptionRequest, environment: AppStoreEnvironment, logger: Logger
    ) async throws -> ServerAPIOutcome<Int> {
        let body = try AppStoreJSON.encoder().encode(consumption)
        switch try await request(
            .PUT, path: "/inApps/v2/transactions/consumption/\(Self.escape(transactionId))", parameters: [],
            body: body, environment: environment, logger: logger)
        {
        case .answered: return .found(202)
        case .notFoundHere: return .notFound
        case .rejected(let code, let reason): return .rejected(errorCode: code, reason: reason)
        case .retryLater(let reason, let status, let code):
            return .retryLater(reason: reason, httpStatus: status, errorCode: code)
        }
    }

    // MARK: - Paging

    private func pagedTransactions<Page: Decodable>(
        path: String, parameters: [(String, String)], as _: Page.Type, logger: Logger,
        read: (Page) -> (tokens: [String], hasMore: Bool, revision: String?)
    ) async throws -> ServerAPIOutcome<VerifiedTransactions> {
        environments: for environment in configuration.environments {
            var tokens: [String] = []
            var revision: String?
            var pages = 0
            while true {
                var query = parameters
                if let revision { query.append(("revision", revision)) }
                var pageLogger = logger
                pageLogger[metadataKey: "apple.page"] = "\(pages + 1)"
                switch try await get(path: path, parameters: query, environment: environment, logger: pageLogger) {
                case .notFoundHere:
                    // Only the first page tells where the customer lives; a later 4040010 is
                    // Apple losing track mid-way, which says nothing for good.
                    guard pages == 0 else {
                        return .retryLater(
                            reason: "4040010 on page \(pages + 1) after earlier pages", httpStatus: 404,
                            errorCode: 4_040_010)
                    }
                    continue environments
                case .rejected(let code, let reason):
                    return .rejected(errorCode: code, reason: reason)
                case .retryLater(let reason, let status, let code):
                    return .retryLater(reason: reason, httpStatus: status, errorCode: code)
                case .answered(let body):
                    let page: Page
                    do {
                        page = try JSONDecoder().decode(Page.self, from: body)
                    } catch {
                        return .retryLater(
                            reason: "malformed page \(pages + 1) of \(path): \(error)", httpStatus: 200, errorCode: nil)
                    }
                    pages += 1
                    let (received, hasMore, next) = read(page)
                    tokens += received
                    guard hasMore else {
                        return .found(await verified(tokens, environment: environment, pages: pages, logger: logger))
                    }
                    guard let next, next != revision else {
                        return .retryLater(
                            reason: "page \(pages) says hasMore without a new revision", httpStatus: 200, errorCode: nil
                        )
                    }
                    guard pages < configuration.maxPages else {
                        return .retryLater(
                            reason: "more than \(configuration.maxPages) pages", httpStatus: 200, errorCode: nil)
                    }
                    revision = next
                }
            }
        }
        return .notFound
    }

    /// Verifies every token; keeps per transaction id the one Apple signed last.
    private func verified(_ tokens: [String], environment: AppStoreEnvironment, pages: Int, logger: Logger) async
        -> VerifiedTransactions
    {
        var newest: [String: JWSTransaction] = [:]
        var withoutID: [JWSTransaction] = []
        var rejected: [RejectedSignedTransaction] = []
        for token in tokens {
            switch await verifier.verifyTransaction(token) {
            case .valid(let transaction):
                guard let id = transaction.transactionId else {
                    withoutID.append(transaction)
                    continue
                }
                if let seen = newest[id], (seen.signedDate ?? .distantPast) > (transaction.signedDate ?? .distantPast) {
                    continue
                }
                newest[id] = transaction
            case .invalid(let failure):
                rejected.append(RejectedSignedTransaction(token: token, failure: failure))
            }
        }
        if !rejected.isEmpty {
            logger.warning(
                "Server API returned signed transactions that do not verify",
                metadata: ["apple.rejected": "\(rejected.count)", "reason": "\(rejected[0].failure)"])
        }
        let transactions = (Array(newest.values) + withoutID).sorted {
            ($0.purchaseDate ?? .distantPast, $0.transactionId ?? "") < (
                $1.purchaseDate ?? .distantPast, $1.transactionId ?? ""
            )
        }
        return VerifiedTransactions(
            environment: environment, transactions: transactions, rejected: rejected, pages: pages,
            received: tokens.count)
    }

    // MARK: - One request, retried

    enum Exchange: Sendable {
        case answered(Data)
        case notFoundHere
        case rejected(code: Int?, reason: String)
        case retryLater(reason: String, status: Int?, code: Int?)
    }

    /// One GET in one environment, retried until it answers or the budget is spent.
    func get(path: String, parameters: [(String, String)], environment: AppStoreEnvironment, logger: Logger)
        async throws -> Exchange
    {
        try await request(.GET, path: path, parameters: parameters, body: nil, environment: environment, logger: logger)
    }

    /// One request in one environment, retried until it answers or the budget is spent.
    func request(
        _ method: Verb, path: String, parameters: [(String, String)], body: Data?,
        environment: AppStoreEnvironment, logger: Logger
    ) async throws -> Exchange {
        let url = Self.url(
            base: environment == .sandbox ? configuration.sandboxURL : configuration.productionURL, path: path,
            parameters: parameters)
        var attempt = 0
        while true {
            try Task.checkCancellation()
            attempt += 1
            var logger = logger
            logger[metadataKey: "apple.endpoint"] = "\(environment)"
            logger[metadataKey: "apple.attempt"] = "\(attempt)"

            let failure: (reason: String, status: Int?, code: Int?, wait: Duration?)
            switch try await send(url, method: method, body: body, environment: environment, logger: logger) {
            case .done(let exchange):
                return exchange
            case .retry(let reason, let status, let code, let wait):
                failure = (reason, status, code, wait)
            }
            guard attempt < configuration.retry.maxAttempts else {
                logger.warning(
                    "Server API still failing, leaving it for a later run", metadata: ["reason": "\(failure.reason)"])
                return .retryLater(
                    reason: "\(failure.reason) (after \(attempt) attempts)", status: failure.status, code: failure.code)
            }
            let wait = failure.wait ?? configuration.retry.backoff(afterAttempt: attempt)
            if wait > configuration.maxRetryAfter {
                return .retryLater(
                    reason: "\(failure.reason); Retry-After is \(wait.milliseconds) ms away", status: failure.status,
                    code: failure.code)
            }
            logger.info(
                "Server API request failed, retrying",
                metadata: ["reason": "\(failure.reason)", "retry.after_ms": "\(wait.milliseconds)"])
            try await Task.sleep(for: wait)
        }
    }

    /// The HTTP methods the Server API endpoints use.
    enum Verb: Sendable {
        case GET, POST, PUT
    }

    private enum Attempt {
        case done(Exchange)
        case retry(reason: String, status: Int?, code: Int?, wait: Duration?)
    }

    /// Apple's retryable error codes (DOMAIN.md): account, app and original transaction not
    /// found "retryable", and a general internal error.
    static let retryableCodes: Set<Int> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]
    /// Transaction id not found: ask the next environment.
    static let transactionNotFound = 4_040_010

    /// One request at the pace of its environment. Neither the token nor the key is logged.
    private func send(
        _ url: String, method: Verb = .GET, body: Data? = nil, environment: AppStoreEnvironment, logger: Logger
    ) async throws -> Attempt {
        try await (environment == .sandbox ? sandboxPacer : productionPacer).waitForTurn()
        var request = HTTPClientRequest(url: url)
        switch method {
        case .GET: request.method = .GET
        case .POST: request.method = .POST
        case .PUT: request.method = .PUT
        }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let token: String
        do {
            token = try ServerAPIToken.make(key: configuration.key)
        } catch {
            throw ServerAPIKeyError.unreadable("cannot sign a token: \(type(of: error))")
        }
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "application/json")

        return try await limiter.withPermit {
            let started = ContinuousClock.now
            do {
                // One deadline over the head and the whole body (see HTTPExchange).
                let answer = try await HTTPExchange.exchange(
                    request, within: configuration.requestTimeout, upTo: 32 << 20, http: httpClient, logger: logger)
                return try Self.classify(
                    status: answer.status, body: Data(answer.body.readableBytesView),
                    retryAfter: answer.headers.first(name: "Retry-After"),
                    environment: environment, now: Date())
            } catch let error as HTTPExchange.Timeout {
                if Task.isCancelled { throw CancellationError() }
                let elapsed = ContinuousClock.now - started
                return .retry(
                    reason: "Server API timed out after \(elapsed.milliseconds) ms (\(error))", status: nil, code: nil,
                    wait: nil)
            } catch let error as HTTPClientError
                where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
            {
                if Task.isCancelled { throw CancellationError() }
                let elapsed = ContinuousClock.now - started
                return .retry(
                    reason: "Server API timed out after \(elapsed.milliseconds) ms (\(error))", status: nil, code: nil,
                    wait: nil)
            } catch let error as ServerAPIConfigurationError {
                throw error
            } catch {
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                return .retry(reason: "connection error: \(error)", status: nil, code: nil, wait: nil)
            }
        }
    }

    /// What an HTTP answer means.
    private static func classify(
        status: Int, body: Data, retryAfter: String?, environment: AppStoreEnvironment, now: Date
    ) throws -> Attempt {
        switch status {
        case 200:
            // A truncated body is trouble on the way, not an answer: retried like a 5xx.
            guard (try? JSONSerialization.jsonObject(with: body)) is [String: Any] else {
                return .retry(
                    reason: "malformed Server API response (\(body.count) bytes)", status: status, code: nil, wait: nil)
            }
            return .done(.answered(body))
        case 202:
            // Send Consumption Information answers 202 Accepted with no body.
            return .done(.answered(body))
        case 401:
            // The body is not JSON; there is nothing more to learn from it.
            throw ServerAPIConfigurationError(httpStatus: status, environment: environment)
        case 429:
            return .retry(
                reason: "HTTP 429 rate limited", status: status, code: 4_290_000,
                wait: retryAfter.flatMap { retryAfterWait($0, now: now) })
        default:
            break
        }
        let error = try? JSONDecoder().decode(ServerAPIErrorPayload.self, from: body)
        let code = error?.errorCode
        let message = error?.errorMessage.map { ": \($0)" } ?? ""
        if code == transactionNotFound { return .done(.notFoundHere) }
        if let code, retryableCodes.contains(code) {
            return .retry(reason: "\(code)\(message)", status: status, code: code, wait: nil)
        }
        if status >= 500 {
            return .retry(
                reason: "HTTP \(status)\(code.map { " (\($0))" } ?? "")\(message)", status: status, code: code,
                wait: nil)
        }
        return .done(.rejected(code: code, reason: "HTTP \(status)\(code.map { " \($0)" } ?? "")\(message)"))
    }

    /// `Retry-After` as Apple sends it, epoch milliseconds; a small number is read as seconds
    /// from now (RFC 9110), in case a proxy in between answered instead.
    static func retryAfterWait(_ header: String, now: Date) -> Duration? {
        guard let value = Int64(header.trimmingCharacters(in: .whitespaces)), value >= 0 else { return nil }
        if value > 100_000_000_000 {
            return .milliseconds(max(0, value - now.millisecondsSince1970))
        }
        return .seconds(value)
    }

    // MARK: - URLs

    static func url(base: String, path: String, parameters: [(String, String)]) -> String {
        var url = base.hasSuffix("/") ? String(base.dropLast()) : base
        url += path
        if !parameters.isEmpty {
            url += "?" + parameters.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
        }
        return url
    }

    static func escape(_ component: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return component.addingPercentEncoding(withAllowedCharacters: allowed) ?? component
    }
}
