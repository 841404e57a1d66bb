import Foundation

/// One page of Get Notification History (`NotificationHistoryResponse`): up to 20 records.
public struct NotificationHistoryResponse: Codable, Hashable, Sendable {
    /// The token for the next page (Apple sends one on every page; `hasMore` says whether to use it).
    public var paginationToken: String?
    /// Whether another page follows.
    public var hasMore: Bool?
    /// The records of this page.
    public var notificationHistory: [NotificationHistoryRecord]?

    /// Creates a page.
    public init(paginationToken: String? = nil, hasMore: Bool? = nil, notificationHistory: [NotificationHistoryRecord]? = nil) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}

/// One notification the App Store sent (or tried to send) to the app's endpoint
/// (`NotificationHistoryResponseItem`).
public struct NotificationHistoryRecord: Codable, Hashable, Sendable {
    /// The notification's `signedPayload`, exactly as the endpoint would have received it.
    public var signedPayload: String?
    /// Apple's attempts to deliver it, oldest first (at most six).
    public var sendAttempts: [SendAttempt]?

    /// Creates a record.
    public init(signedPayload: String?, sendAttempts: [SendAttempt]?) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}

/// One attempt to deliver a notification (`SendAttemptItem`).
public struct SendAttempt: Codable, Hashable, Sendable {
    /// When Apple tried.
    public var attemptDate: Date?
    /// `SUCCESS`, `TIMED_OUT`, `TLS_ISSUE`, `CIRCULAR_REDIRECT`, `NO_RESPONSE`, `SOCKET_ISSUE`,
    /// `UNSUPPORTED_CHARSET`, `INVALID_RESPONSE`, `PREMATURE_CLOSE`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`,
    /// `OTHER`; kept raw so that a value Apple adds later decodes.
    public var sendAttemptResult: String?

    /// Creates an attempt.
    public init(attemptDate: Date?, sendAttemptResult: String?) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }

    /// Apple's result for a delivered notification.
    public static let success = "SUCCESS"
}
