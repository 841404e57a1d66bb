/// The Server API refused the credentials (HTTP 401): the key, issuer id or bundle id is wrong,
/// or the app was never released (production answers 401 then). No retry fixes it; the run
/// stops with this message.
public struct ServerAPIConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status, 401.
    public var httpStatus: Int
    /// Which environment said it.
    public var environment: AppStoreEnvironment
    /// Explains what to check. Never contains the key or the token.
    public var description: String {
        "App Store Server API (\(environment)) answered HTTP \(httpStatus): check APPSTORE_KEY_ID, APPSTORE_ISSUER_ID, "
            + "APPSTORE_PRIVATE_KEY_FILE and the bundle id (production also answers 401 for an app never released)"
    }

    /// Creates the error.
    public init(httpStatus: Int, environment: AppStoreEnvironment) {
        self.httpStatus = httpStatus
        self.environment = environment
    }
}
