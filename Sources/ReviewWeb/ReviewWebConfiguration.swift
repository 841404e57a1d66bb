import Foundation
import Logging
import Reconciliation

/// What `reconcile serve` needs: where to listen, the database, and the login token.
public struct ReviewWebConfiguration: Sendable {
    /// Address to bind; loopback by default, since the pages are for staff behind a proxy or a tunnel.
    public var host: String
    /// Port to bind; 0 picks a free one.
    public var port: Int
    /// libpq URI or conninfo; nil uses libpq's `PG*` variables.
    public var databaseURL: String?
    /// `RECONCILE_WEB_TOKEN`: what a person types to log in.
    public var token: Secret
    /// How long a session lives without being used.
    public var sessionIdleLifetime: TimeInterval
    /// Mark the session cookie `Secure`; set when the pages are served over HTTPS (behind a proxy).
    public var secureCookies: Bool
    /// The server's logger; tokens, session ids and passwords are never logged.
    public var logger: Logger

    /// Creates a configuration.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, databaseURL: String?, token: Secret,
        sessionIdleLifetime: TimeInterval = 8 * 3600, secureCookies: Bool = false,
        logger: Logger = Logger(label: "reconcile.serve")
    ) {
        self.host = host
        self.port = port
        self.databaseURL = databaseURL
        self.token = token
        self.sessionIdleLifetime = sessionIdleLifetime
        self.secureCookies = secureCookies
        self.logger = logger
    }
}
