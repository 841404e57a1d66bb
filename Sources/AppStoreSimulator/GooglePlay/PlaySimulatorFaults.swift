import Foundation

/// Trouble the simulator injects into Google Play Developer API answers (not the token endpoint),
/// set as the `play` member of `POST /sim/faults`. Shares are probabilities from 0 to 1, drawn per
/// request in the order of the fields below; 1 makes a fault certain, which is what tests use.
public struct PlaySimulatorFaults: Sendable, Hashable, Codable {
    /// Added to every answer, milliseconds.
    public var latencyMilliseconds: Int
    /// Share answered with a server error (``http5xxStatus``, Google's `backendError` body).
    public var http5xxShare: Double
    /// The status of those answers (default 503).
    public var http5xxStatus: Int
    /// Share answered HTTP 409 `concurrentUpdate` (Google asks for a retry with backoff).
    public var http409Share: Double
    /// Share answered HTTP 429 `rateLimitExceeded`.
    public var http429Share: Double
    /// Share answered HTTP 401 `permissionDenied`: the service account lacks rights in Play Console.
    public var permissionDeniedShare: Double
    /// Share answered HTTP 401 with no body, which Google sends too.
    public var empty401Share: Double
    /// When set, the faults apply to this many more requests, then clear themselves.
    public var remainingRequests: Int?

    /// No faults.
    public static let none = PlaySimulatorFaults()

    /// Creates a fault set; everything defaults to off.
    public init(
        latencyMilliseconds: Int = 0, http5xxShare: Double = 0, http5xxStatus: Int = 503, http409Share: Double = 0,
        http429Share: Double = 0, permissionDeniedShare: Double = 0, empty401Share: Double = 0,
        remainingRequests: Int? = nil
    ) {
        self.latencyMilliseconds = latencyMilliseconds
        self.http5xxShare = http5xxShare
        self.http5xxStatus = http5xxStatus
        self.http409Share = http409Share
        self.http429Share = http429Share
        self.permissionDeniedShare = permissionDeniedShare
        self.empty401Share = empty401Share
        self.remainingRequests = remainingRequests
    }

    enum CodingKeys: String, CodingKey {
        case latencyMilliseconds = "latency_ms"
        case http5xxShare = "http_5xx_share"
        case http5xxStatus = "http_5xx_status"
        case http409Share = "http_409_share"
        case http429Share = "http_429_share"
        case permissionDeniedShare = "permission_denied_share"
        case empty401Share = "empty_401_share"
        case remainingRequests = "requests"
    }

    /// Every field is optional in the JSON; a missing one is off.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        latencyMilliseconds = try c.decodeIfPresent(Int.self, forKey: .latencyMilliseconds) ?? 0
        http5xxShare = try c.decodeIfPresent(Double.self, forKey: .http5xxShare) ?? 0
        http5xxStatus = try c.decodeIfPresent(Int.self, forKey: .http5xxStatus) ?? 503
        http409Share = try c.decodeIfPresent(Double.self, forKey: .http409Share) ?? 0
        http429Share = try c.decodeIfPresent(Double.self, forKey: .http429Share) ?? 0
        permissionDeniedShare = try c.decodeIfPresent(Double.self, forKey: .permissionDeniedShare) ?? 0
        empty401Share = try c.decodeIfPresent(Double.self, forKey: .empty401Share) ?? 0
        remainingRequests = try c.decodeIfPresent(Int.self, forKey: .remainingRequests)
        guard (500...599).contains(http5xxStatus) else {
            throw DecodingError.dataCorruptedError(
                forKey: .http5xxStatus, in: c, debugDescription: "http_5xx_status must be 500…599")
        }
    }

    /// What to do to one request.
    enum Action: Sendable, Equatable {
        case none
        case http5xx(Int)
        case concurrentUpdate
        case rateLimited
        case permissionDenied
        case empty401
    }

    /// Draws the fault for one request.
    func draw() -> Action {
        func hit(_ share: Double) -> Bool { share > 0 && Double.random(in: 0..<1) < share }
        if hit(http5xxShare) { return .http5xx(http5xxStatus) }
        if hit(http409Share) { return .concurrentUpdate }
        if hit(http429Share) { return .rateLimited }
        if hit(permissionDeniedShare) { return .permissionDenied }
        if hit(empty401Share) { return .empty401 }
        return .none
    }
}
