/// Google refused the job's credentials: the Developer API answered HTTP 401 or 403
/// (`permissionDenied`, or a 401 with no body at all), or the token endpoint refused the
/// service account's assertion (HTTP 400/401). No retry fixes it; the run stops with this
/// message, as it does on Apple's 401. Never contains the key or a token.
public struct PlayAPIConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where it was said.
    public enum Endpoint: String, Hashable, Sendable {
        /// The OAuth 2.0 token endpoint (`token_uri`).
        case token
        /// The Google Play Developer API.
        case developerAPI
    }

    public var endpoint: Endpoint
    /// The HTTP status.
    public var httpStatus: Int
    /// Google's reason (`permissionDenied`, OAuth's `invalid_grant`, …), when it gave one.
    public var reason: String?
    /// The service account's email (not a secret), so the message says whom to grant access.
    public var clientEmail: String

    public init(endpoint: Endpoint, httpStatus: Int, reason: String?, clientEmail: String) {
        self.endpoint = endpoint
        self.httpStatus = httpStatus
        self.reason = reason.map { String($0.prefix(80)) }
        self.clientEmail = clientEmail
    }

    /// What to check.
    public var description: String {
        let said = "HTTP \(httpStatus)\(reason.map { " (\($0))" } ?? "")"
        return switch endpoint {
        case .developerAPI:
            "Google Play Developer API answered \(said): the service account \(clientEmail) lacks access to the app "
                + "in Play Console (Users and permissions: invite it with \"View app information\", \"View financial "
                + "data\" and \"Manage orders and subscriptions\"), or the Google Play Android Developer API is not "
                + "enabled for its Cloud project; check GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"
        case .token:
            "Google's token endpoint refused the service account \(clientEmail) (\(said)): the key was deleted or "
                + "disabled, or the machine's clock is wrong; check GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"
        }
    }
}
