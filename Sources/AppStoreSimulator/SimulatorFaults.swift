import Foundation

/// Trouble the simulator injects into verifyReceipt and Server API answers, set by flags at start and by
/// `POST /sim/faults` at run time. Shares are probabilities from 0 to 1, drawn per request in the
/// order of the fields below (a hang first, then a stalled body, HTTP 503, ...); 1 makes a fault certain, which is
/// what tests use.
public struct SimulatorFaults: Sendable, Hashable, Codable {
    /// Added to every verifyReceipt answer, milliseconds.
    public var latencyMilliseconds: Int
    /// Share of requests that hang for ``hangMilliseconds`` before answering normally.
    public var hangShare: Double
    /// How long a hang lasts, milliseconds (default 60 s: past any sane client timeout).
    public var hangMilliseconds: Int
    /// Share answered with a `200` head announcing 4,096 bytes (`Content-Length`) and one byte of
    /// body, after which the answer stalls for ``hangMilliseconds`` and the connection is closed:
    /// a stalled Apple, or a connection that a NAT or proxy dropped after the head.
    public var stalledBodyShare: Double
    /// Share answered with HTTP 503 and no JSON.
    public var http503Share: Double
    /// Share answered HTTP 200 with a truncated JSON body.
    public var malformedShare: Double
    /// Share answered `{"status": 21005}`.
    public var status21005Share: Double
    /// Share answered `{"status": 21100, "is_retryable": true}`.
    public var status21100RetryableShare: Double
    /// Share answered `{"status": 21100, "is_retryable": false}`.
    public var status21100Share: Double
    /// When set, every request not hit by another fault gets this status (with
    /// ``forcedIsRetryable`` when set), to exercise any status code.
    public var forcedStatus: Int?
    /// `is_retryable` sent with ``forcedStatus``.
    public var forcedIsRetryable: Bool?
    /// When set, the faults apply to this many more requests (verifyReceipt and Server API),
    /// then clear themselves; lets a test say "fail twice, then answer".
    public var remainingRequests: Int?
    /// Share of Server API requests answered HTTP 429 (`4290000`) with a `Retry-After`.
    public var http429Share: Double
    /// How far ahead the `Retry-After` of a 429 points, milliseconds.
    public var retryAfterMilliseconds: Int
    /// When set, every Server API request not hit by another fault answers this error code
    /// (`4040002`, `5000001`, …) with the HTTP status Apple pairs with it.
    public var apiErrorCode: Int?
    /// Share of Server API answers whose signed transactions carry a corrupted signature: a
    /// misconfigured or impersonated server, which the client must report and never trust.
    public var forgedJWSShare: Double
    /// Faults of the Google Play Developer API (JSON member `play`); nil: none. The fields above
    /// are Apple's and leave Google Play's answers alone.
    public var play: PlaySimulatorFaults?

    /// No faults.
    public static let none = SimulatorFaults()

    /// Creates a fault set; everything defaults to off.
    public init(
        latencyMilliseconds: Int = 0, hangShare: Double = 0, hangMilliseconds: Int = 60_000,
        stalledBodyShare: Double = 0, http503Share: Double = 0,
        malformedShare: Double = 0, status21005Share: Double = 0, status21100RetryableShare: Double = 0,
        status21100Share: Double = 0, forcedStatus: Int? = nil, forcedIsRetryable: Bool? = nil,
        remainingRequests: Int? = nil, http429Share: Double = 0, retryAfterMilliseconds: Int = 1000,
        apiErrorCode: Int? = nil, forgedJWSShare: Double = 0, play: PlaySimulatorFaults? = nil
    ) {
        self.latencyMilliseconds = latencyMilliseconds
        self.hangShare = hangShare
        self.hangMilliseconds = hangMilliseconds
        self.stalledBodyShare = stalledBodyShare
        self.http503Share = http503Share
        self.malformedShare = malformedShare
        self.status21005Share = status21005Share
        self.status21100RetryableShare = status21100RetryableShare
        self.status21100Share = status21100Share
        self.forcedStatus = forcedStatus
        self.forcedIsRetryable = forcedIsRetryable
        self.remainingRequests = remainingRequests
        self.http429Share = http429Share
        self.retryAfterMilliseconds = retryAfterMilliseconds
        self.apiErrorCode = apiErrorCode
        self.forgedJWSShare = forgedJWSShare
        self.play = play
    }

    enum CodingKeys: String, CodingKey {
        case latencyMilliseconds = "latency_ms"
        case hangShare = "hang_share"
        case hangMilliseconds = "hang_ms"
        case stalledBodyShare = "stalled_body_share"
        case http503Share = "http_503_share"
        case malformedShare = "malformed_share"
        case status21005Share = "status_21005_share"
        case status21100RetryableShare = "status_21100_retryable_share"
        case status21100Share = "status_21100_share"
        case forcedStatus = "status"
        case forcedIsRetryable = "is_retryable"
        case remainingRequests = "requests"
        case http429Share = "http_429_share"
        case retryAfterMilliseconds = "retry_after_ms"
        case apiErrorCode = "api_error_code"
        case forgedJWSShare = "forged_jws_share"
        case play
    }

    /// Every field is optional in the JSON; a missing one is off.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = SimulatorFaults()
        latencyMilliseconds = try c.decodeIfPresent(Int.self, forKey: .latencyMilliseconds) ?? 0
        hangShare = try c.decodeIfPresent(Double.self, forKey: .hangShare) ?? 0
        hangMilliseconds = try c.decodeIfPresent(Int.self, forKey: .hangMilliseconds) ?? defaults.hangMilliseconds
        stalledBodyShare = try c.decodeIfPresent(Double.self, forKey: .stalledBodyShare) ?? 0
        http503Share = try c.decodeIfPresent(Double.self, forKey: .http503Share) ?? 0
        malformedShare = try c.decodeIfPresent(Double.self, forKey: .malformedShare) ?? 0
        status21005Share = try c.decodeIfPresent(Double.self, forKey: .status21005Share) ?? 0
        status21100RetryableShare = try c.decodeIfPresent(Double.self, forKey: .status21100RetryableShare) ?? 0
        status21100Share = try c.decodeIfPresent(Double.self, forKey: .status21100Share) ?? 0
        forcedStatus = try c.decodeIfPresent(Int.self, forKey: .forcedStatus)
        forcedIsRetryable = try c.decodeIfPresent(Bool.self, forKey: .forcedIsRetryable)
        remainingRequests = try c.decodeIfPresent(Int.self, forKey: .remainingRequests)
        http429Share = try c.decodeIfPresent(Double.self, forKey: .http429Share) ?? 0
        retryAfterMilliseconds =
            try c.decodeIfPresent(Int.self, forKey: .retryAfterMilliseconds) ?? defaults.retryAfterMilliseconds
        apiErrorCode = try c.decodeIfPresent(Int.self, forKey: .apiErrorCode)
        forgedJWSShare = try c.decodeIfPresent(Double.self, forKey: .forgedJWSShare) ?? 0
        play = try c.decodeIfPresent(PlaySimulatorFaults.self, forKey: .play)
    }

    /// What to do to one request.
    enum Action: Sendable, Equatable {
        case none
        case hang(Duration)
        case stalledBody(Duration)
        case http503
        case malformed
        case status(Int, isRetryable: Bool?)
        case http429(retryAfterMilliseconds: Int)
        case apiError(Int)
    }

    /// Draws the fault for one request.
    func draw() -> Action {
        func hit(_ share: Double) -> Bool { share > 0 && Double.random(in: 0..<1) < share }
        if hit(hangShare) { return .hang(.milliseconds(hangMilliseconds)) }
        if hit(stalledBodyShare) { return .stalledBody(.milliseconds(hangMilliseconds)) }
        if hit(http503Share) { return .http503 }
        if hit(malformedShare) { return .malformed }
        if hit(status21005Share) { return .status(21005, isRetryable: nil) }
        if hit(status21100RetryableShare) { return .status(21100, isRetryable: true) }
        if hit(status21100Share) { return .status(21100, isRetryable: false) }
        if let forcedStatus { return .status(forcedStatus, isRetryable: forcedIsRetryable) }
        return .none
    }

    /// Draws the fault for one Server API request: the transport faults of verifyReceipt, then
    /// 429, then a forced error code. (verifyReceipt's status faults mean nothing here.)
    func drawServerAPI() -> Action {
        func hit(_ share: Double) -> Bool { share > 0 && Double.random(in: 0..<1) < share }
        if hit(hangShare) { return .hang(.milliseconds(hangMilliseconds)) }
        if hit(stalledBodyShare) { return .stalledBody(.milliseconds(hangMilliseconds)) }
        if hit(http503Share) { return .http503 }
        if hit(malformedShare) { return .malformed }
        if hit(http429Share) { return .http429(retryAfterMilliseconds: retryAfterMilliseconds) }
        if let apiErrorCode { return .apiError(apiErrorCode) }
        return .none
    }

    /// Whether to corrupt the signed data of one Server API answer.
    func drawForgery() -> Bool { forgedJWSShare > 0 && Double.random(in: 0..<1) < forgedJWSShare }
}
