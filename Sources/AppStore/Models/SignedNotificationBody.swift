/// The HTTP body Apple POSTs for a Server Notification V2: `{"signedPayload": "<JWS>"}`.
public struct SignedNotificationBody: Codable, Hashable, Sendable {
    /// The notification as a JWS.
    public var signedPayload: String

    /// Wraps a signed payload.
    public init(signedPayload: String) {
        self.signedPayload = signedPayload
    }
}
