import Foundation

/// The body of Get Notification History (`NotificationHistoryRequest`): the span is required,
/// every other field narrows it. Dates are epoch milliseconds on the wire.
public struct NotificationHistoryRequest: Codable, Hashable, Sendable {
    /// Start of the span (within the last 180 days in production, 30 in sandbox).
    public var startDate: Date
    /// End of the span; a future date is read as now.
    public var endDate: Date
    /// Only this notification type (not together with `transactionId`).
    public var notificationType: NotificationType?
    /// Only this subtype (with its `notificationType`).
    public var notificationSubtype: NotificationSubtype?
    /// Only notifications about the customer who owns this transaction.
    public var transactionId: String?
    /// Only notifications the App Store could not deliver to the app's endpoint.
    public var onlyFailures: Bool?

    /// Creates a request for a span.
    public init(startDate: Date, endDate: Date, notificationType: NotificationType? = nil, onlyFailures: Bool? = nil) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.onlyFailures = onlyFailures
    }
}
