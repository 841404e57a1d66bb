import AppStore
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Asks the Google Play Developer API (`/androidpublisher/v3/applications/{packageName}/…`)
/// about purchases: `purchases.productsv2`, `purchases.subscriptionsv2`,
/// `purchases.voidedpurchases`, `orders.get`, and the two acknowledges.
///
/// Every request carries the ``PlayAccessTokenProvider``'s bearer token, waits its turn at a
/// pacer (`GOOGLE_PLAY_API_RATE`), holds one of ``Configuration/maxConcurrentRequests`` permits,
/// and exchanges within one deadline over head and body (``HTTPExchange``). HTTP 5xx, 409
/// (`concurrentUpdate`), timeouts and connection errors are retried with backoff and jitter, then
/// ``PlayAPIOutcome/retryLater(reason:httpStatus:)``; 429 waits its `Retry-After` (seconds) or the
/// backoff. 401 and 403 throw ``PlayAPIConfigurationError``: the run stops.
public struct PlayDeveloperAPIClient: Sendable {
    /// Where and how to call the API.
    public struct Configuration: Sendable {
        /// `GOOGLE_PLAY_API_URL`.
        public var baseURL: String
        /// Requests per second (`GOOGLE_PLAY_API_RATE`; Google's bucket is 3,000 a minute).
        public var rate: Double
        /// Deadline of one HTTP exchange: connection, head and the whole body.
        public var requestTimeout: Duration
        /// Retries of one request.
        public var retry: RetryPolicy
        /// The longest `Retry-After` waited within a call; a longer one becomes `retryLater`.
        public var maxRetryAfter: Duration
        /// Pages read at most per voided-purchases walk, against a server that pages forever.
        public var maxPages: Int
        /// Requests in flight at once, and connections kept.
        public var maxConcurrentRequests: Int

        public init(
            baseURL: String = GooglePlay.defaultAPIURL, rate: Double = 20, requestTimeout: Duration = .seconds(30),
            retry: RetryPolicy = RetryPolicy(), maxRetryAfter: Duration = .seconds(60), maxPages: Int = 10_000,
            maxConcurrentRequests: Int = 16
        ) {
            self.baseURL = baseURL
            self.rate = rate
            self.requestTimeout = requestTimeout
            self.retry = retry
            self.maxRetryAfter = maxRetryAfter
            self.maxPages = max(1, maxPages)
            self.maxConcurrentRequests = maxConcurrentRequests
        }
    }

    /// The filters of `purchases.voidedpurchases.list`, repeated on every page.
    public struct VoidedPurchasesQuery: Sendable, Hashable {
        /// Voids Google saw at or after this instant (`startTime`, ms; at most 30 days back).
        public var startTime: Date?
        /// Voids Google saw before this instant (`endTime`, ms).
        public var endTime: Date?
        /// `maxResults` per page.
        public var maxResults: Int?

        public init(startTime: Date? = nil, endTime: Date? = nil, maxResults: Int? = 1000) {
            self.startTime = startTime
            self.endTime = endTime
            self.maxResults = maxResults
        }

        func parameters(token: String?) -> [(String, String)] {
            // type=1: subscriptions too (their renewals are told apart by orderId); partial
            // refunds by quantity come only when asked for.
            var parameters = [("type", "1"), ("includeQuantityBasedPartialRefund", "true")]
            if let startTime { parameters.append(("startTime", String(Int64(startTime.timeIntervalSince1970 * 1000)))) }
            if let endTime { parameters.append(("endTime", String(Int64(endTime.timeIntervalSince1970 * 1000)))) }
            if let maxResults { parameters.append(("maxResults", String(maxResults))) }
            if let token { parameters.append(("token", token)) }
            return parameters
        }
    }

    public let configuration: Configuration
    public let tokens: PlayAccessTokenProvider
    private let http: HTTPClient
    private let pacer: RequestPacer
    private let limiter: ConcurrencyLimiter

    /// Creates a client on a caller-owned `HTTPClient` (see ``makeHTTPClient(configuration:)``).
    public init(configuration: Configuration, tokens: PlayAccessTokenProvider, httpClient: HTTPClient) {
        self.configuration = configuration
        self.tokens = tokens
        http = httpClient
        pacer = RequestPacer(rate: configuration.rate)
        limiter = ConcurrencyLimiter(limit: configuration.maxConcurrentRequests)
    }

    /// An `HTTPClient` sized for the configuration: no redirects (a bearer token must not follow one).
    public static func makeHTTPClient(configuration: Configuration) -> HTTPClient {
        var http = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(min(configuration.requestTimeout.milliseconds, 10_000))),
            connectionPool: .init(
                idleTimeout: .seconds(60),
                concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, configuration.maxConcurrentRequests)))
        http.httpVersion = .automatic
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
    }

    // MARK: - Endpoints

    /// `purchases.productsv2.getproductpurchasev2`: a one-time purchase by its token.
    public func productPurchase(packageName: String, token: String, logger: Logger) async throws
        -> PlayAPIOutcome<ProductPurchaseV2>
    {
        try await get(path(packageName, "purchases", "productsv2", "tokens", token), logger: logger)
    }

    /// `purchases.subscriptionsv2.get`: a subscription by its token.
    public func subscriptionPurchase(packageName: String, token: String, logger: Logger) async throws
        -> PlayAPIOutcome<SubscriptionPurchaseV2>
    {
        try await get(path(packageName, "purchases", "subscriptionsv2", "tokens", token), logger: logger)
    }

    /// `orders.get`: one order by its id (`GPA.…`).
    public func order(packageName: String, orderID: String, logger: Logger) async throws -> PlayAPIOutcome<PlayOrder> {
        try await get(path(packageName, "orders", orderID), logger: logger)
    }

    /// One page of `purchases.voidedpurchases.list`; `pageToken` is the previous page's `nextPageToken`.
    public func voidedPurchases(
        packageName: String, query: VoidedPurchasesQuery, pageToken: String? = nil, logger: Logger
    ) async throws -> PlayAPIOutcome<VoidedPurchasesPage> {
        try await get(
            path(packageName, "purchases", "voidedpurchases"), parameters: query.parameters(token: pageToken),
            logger: logger)
    }

    /// Every page of `purchases.voidedpurchases.list`, handed to `eachPage` as it arrives, until
    /// Google gives no `nextPageToken`. Found: the number of pages read. A page that repeats its
    /// token, or more than ``Configuration/maxPages``, is `retryLater`.
    public func allVoidedPurchases(
        packageName: String, query: VoidedPurchasesQuery, logger: Logger,
        eachPage: ([VoidedPurchase]) async throws -> Void
    ) async throws -> PlayAPIOutcome<Int> {
        var token: String?
        var seen = Set<String>()
        var pages = 0
        while true {
            var pageLogger = logger
            pageLogger[metadataKey: "google.page"] = "\(pages + 1)"
            let page: VoidedPurchasesPage
            switch try await voidedPurchases(packageName: packageName, query: query, pageToken: token, logger: pageLogger) {
            case .found(let found): page = found
            case .notFound: return .notFound
            case .gone: return .gone
            case .rejected(let status, let reason): return .rejected(httpStatus: status, reason: reason)
            case .retryLater(let reason, let status): return .retryLater(reason: reason, httpStatus: status)
            }
            pages += 1
            try await eachPage(page.voidedPurchases)
            guard let next = page.nextPageToken else { return .found(pages) }
            guard seen.insert(next).inserted else {
                return .retryLater(reason: "page \(pages) repeats an earlier nextPageToken", httpStatus: 200)
            }
            guard pages < configuration.maxPages else {
                return .retryLater(reason: "more than \(configuration.maxPages) pages of voided purchases", httpStatus: 200)
            }
            token = next
        }
    }

    /// `purchases.products.acknowledge` (`POST …/purchases/products/{productId}/tokens/{token}:acknowledge`).
    public func acknowledgeProduct(packageName: String, productID: String, token: String, logger: Logger)
        async throws -> PlayAcknowledgeOutcome
    {
        try await acknowledge(path(packageName, "purchases", "products", productID, "tokens", token), logger: logger)
    }

    /// `purchases.subscriptions.acknowledge`
    /// (`POST …/purchases/subscriptions/{subscriptionId}/tokens/{token}:acknowledge`).
    public func acknowledgeSubscription(packageName: String, subscriptionID: String, token: String, logger: Logger)
        async throws -> PlayAcknowledgeOutcome
    {
        try await acknowledge(
            path(packageName, "purchases", "subscriptions", subscriptionID, "tokens", token), logger: logger)
    }

    private func acknowledge(_ path: String, logger: Logger) async throws -> PlayAcknowledgeOutcome {
        switch try await request(.POST, path + ":acknowledge", parameters: [], body: Data("{}".utf8), logger: logger) {
        case .answered: return .acknowledged
        case .refused(404, _, _): return .notFound
        case .refused(410, _, _): return .gone
        // https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.products/acknowledge
        // answers an acknowledged purchase 400 invalidPurchaseState and a refunded one 400 productNotOwnedByUser.
        case .refused(400, "invalidPurchaseState", _): return .alreadyAcknowledged
        case .refused(400, "productNotOwnedByUser", _): return .notOwned
        case .refused(let status, _, let message): return .rejected(httpStatus: status, reason: message)
        case .retryLater(let reason, let status): return .retryLater(reason: reason, httpStatus: status)
        }
    }

    private func get<Value: Decodable & Sendable>(
        _ path: String, parameters: [(String, String)] = [], logger: Logger
    ) async throws -> PlayAPIOutcome<Value> {
        switch try await request(.GET, path, parameters: parameters, body: nil, logger: logger) {
        case .answered(let body):
            do {
                return .found(try JSONDecoder().decode(Value.self, from: body))
            } catch {
                return .retryLater(reason: "malformed answer from \(Self.redacted(path)) (\(body.count) bytes)", httpStatus: 200)
            }
        case .refused(404, _, _): return .notFound
        case .refused(410, _, _): return .gone
        case .refused(let status, _, let message): return .rejected(httpStatus: status, reason: message)
        case .retryLater(let reason, let status): return .retryLater(reason: reason, httpStatus: status)
        }
    }

    // MARK: - One request, retried

    enum Exchange: Sendable {
        case answered(Data)
        /// A 4xx that no retry changes, with Google's reason and a short message.
        case refused(status: Int, reason: String?, message: String)
        case retryLater(reason: String, status: Int?)
    }

    private enum Attempt {
        case done(Exchange)
        case retry(reason: String, status: Int?, wait: Duration?)
    }

    /// One request, retried until it answers or the budget is spent.
    func request(
        _ method: HTTPMethod, _ path: String, parameters: [(String, String)], body: Data?, logger: Logger
    ) async throws -> Exchange {
        let url = Self.url(base: configuration.baseURL, path: path, parameters: parameters)
        var attempt = 0
        while true {
            try Task.checkCancellation()
            attempt += 1
            var logger = logger
            logger[metadataKey: "google.endpoint"] = "\(Self.redacted(path))"
            logger[metadataKey: "google.attempt"] = "\(attempt)"
            let failure: (reason: String, status: Int?, wait: Duration?)
            switch try await send(url, method: method, body: body, logger: logger) {
            case .done(let exchange): return exchange
            case .retry(let reason, let status, let wait): failure = (reason, status, wait)
            }
            guard attempt < configuration.retry.maxAttempts else {
                logger.warning("Google Play API still failing, leaving it for a later run", metadata: ["reason": "\(failure.reason)"])
                return .retryLater(reason: "\(failure.reason) (after \(attempt) attempts)", status: failure.status)
            }
            let wait = failure.wait ?? configuration.retry.backoff(afterAttempt: attempt)
            if wait > configuration.maxRetryAfter {
                return .retryLater(
                    reason: "\(failure.reason); Retry-After is \(wait.milliseconds) ms away", status: failure.status)
            }
            logger.info(
                "Google Play API request failed, retrying",
                metadata: ["reason": "\(failure.reason)", "retry.after_ms": "\(wait.milliseconds)"])
            try await Task.sleep(for: wait)
        }
    }

    private func send(_ url: String, method: HTTPMethod, body: Data?, logger: Logger) async throws -> Attempt {
        let token: String
        do {
            token = try await tokens.accessToken(logger: logger)
        } catch let error as PlayAccessTokenUnavailable {
            // The provider has retried already.
            return .done(.retryLater(reason: error.description, status: nil))
        }
        try await pacer.waitForTurn()
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        return try await limiter.withPermit {
            let started = ContinuousClock.now
            do {
                let answer = try await HTTPExchange.exchange(
                    request, within: configuration.requestTimeout, upTo: 32 << 20, http: http, logger: logger)
                return try await classify(
                    status: answer.status, body: Data(answer.body.readableBytesView),
                    retryAfter: answer.headers.first(name: "Retry-After"))
            } catch let error as PlayAPIConfigurationError {
                throw error
            } catch let error as HTTPExchange.Timeout {
                if Task.isCancelled { throw CancellationError() }
                return .retry(
                    reason: "Google Play API timed out after \((ContinuousClock.now - started).milliseconds) ms (\(error))",
                    status: nil, wait: nil)
            } catch let error as HTTPClientError
                where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
            {
                // AsyncHTTPClient's own deadline for the head may fire first.
                if Task.isCancelled { throw CancellationError() }
                return .retry(
                    reason: "Google Play API timed out after \((ContinuousClock.now - started).milliseconds) ms (\(error))",
                    status: nil, wait: nil)
            } catch {
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                return .retry(reason: "connection error: \(type(of: error))", status: nil, wait: nil)
            }
        }
    }

    /// Google's reasons for a 403 that are quota, not permission: waited like a 429.
    static let rateLimitReasons: Set<String> = ["rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded"]

    /// What an HTTP answer means.
    private func classify(status: Int, body: Data, retryAfter: String?) async throws -> Attempt {
        if (200..<300).contains(status) {
            // A body cut short is trouble on the way, retried like a 5xx; an acknowledge's is empty.
            guard body.isEmpty || (try? JSONSerialization.jsonObject(with: body)) is [String: Any] else {
                return .retry(reason: "malformed answer (\(body.count) bytes)", status: status, wait: nil)
            }
            return .done(.answered(body))
        }
        let error = try? JSONDecoder().decode(GoogleAPIErrorPayload.self, from: body)
        let reason = error?.reason
        let message = "HTTP \(status)" + (reason.map { " \($0)" } ?? "")
            + (error?.error?.message.map { ": \(String($0.prefix(200)))" } ?? "")
        let quota = status == 403 && Self.rateLimitReasons.contains(reason ?? "")
        switch status {
        case _ where status == 401 || (status == 403 && !quota):
            // The token may simply be stale; the next request buys a new one. The run stops anyway.
            await tokens.invalidate()
            throw PlayAPIConfigurationError(
                endpoint: .developerAPI, httpStatus: status, reason: reason, clientEmail: tokens.key.clientEmail)
        case 403, 429:
            // A 403 here is a quota reason: waited like a 429.
            return .retry(reason: message, status: status, wait: retryAfter.flatMap(Self.retryAfterWait))
        case 409, 500...:
            return .retry(reason: message, status: status, wait: nil)
        default:
            return .done(.refused(status: status, reason: reason, message: message))
        }
    }

    /// `Retry-After` in seconds (RFC 9110); an HTTP date is left to the backoff.
    static func retryAfterWait(_ header: String) -> Duration? {
        guard let seconds = Double(header.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return .milliseconds(Int64(seconds * 1000))
    }

    // MARK: - URLs

    /// `/androidpublisher/v3/applications/{packageName}/{segments…}`, every segment percent-encoded
    /// (tokens and order ids are user data).
    func path(_ packageName: String, _ segments: String...) -> String {
        "/androidpublisher/v3/applications/" + ([packageName] + segments).map(Self.escapeSegment).joined(separator: "/")
    }

    /// ``escape(_:)``, and a segment of dots only (`..`) encoded whole, so no proxy resolves it as a step up.
    static func escapeSegment(_ segment: String) -> String {
        if !segment.isEmpty, segment.allSatisfy({ $0 == "." }) {
            return String(repeating: "%2E", count: segment.count)
        }
        return escape(segment)
    }

    /// The path with its tokens cut, for logs: a purchase token is a bearer credential for its purchase.
    static func redacted(_ path: String) -> String {
        guard let range = path.range(of: "/tokens/") else { return path }
        return String(path[..<range.upperBound]) + "…"
    }

    static func url(base: String, path: String, parameters: [(String, String)]) -> String {
        var url = base.hasSuffix("/") ? String(base.dropLast()) : base
        url += path
        if !parameters.isEmpty {
            url += "?" + parameters.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
        }
        return url
    }

    /// RFC 3986's unreserved characters are kept, every other byte of the UTF-8 is `%XX`.
    static func escape(_ component: String) -> String {
        var escaped = ""
        for byte in component.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                escaped += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return escaped
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
