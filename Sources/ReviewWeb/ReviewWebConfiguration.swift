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
    /// `RECONCILE_WEB_TOKEN`: what a person types to log in, beside the name they type; not
    /// accepted when ``users`` is set.
    public var token: Secret
    /// `RECONCILE_WEB_USERS_FILE`: each person logs in with their own name and password instead of
    /// the team token, so the name recorded with a decision, and an approval's second person, is
    /// a person who proved it.
    public var users: WebUsers?
    /// How long a session lives without being used.
    public var sessionIdleLifetime: TimeInterval
    /// Mark the session cookie `Secure`; set when the pages are served over HTTPS (behind a proxy).
    public var secureCookies: Bool
    /// The server's logger; tokens, session ids and passwords are never logged.
    public var logger: Logger
    /// How long a session lives at most, however busy: a stolen cookie stops working.
    public var sessionAbsoluteLifetime: TimeInterval = 12 * 3600
    /// What sessions and login links take as the time now; tests move it instead of waiting.
    public var clock: @Sendable () -> Date = { Date() }
    /// Database connections the pages may hold at once.
    public var maximumConnections = 8
    /// How long a page waits for a free connection before answering 503.
    public var connectionWaitTimeout: TimeInterval = 5
    /// Of those, the most that CSV exports hold at once (never all of them): each holds its
    /// connection as long as its client takes the file, so paused downloads must leave the rest
    /// to the pages. An export past it waits like a page, then gets a 503.
    public var maximumExportConnections = 2
    /// PostgreSQL's `statement_timeout` on the pages' queries.
    public var statementTimeout: TimeInterval = 10
    /// A connection with no request in progress, or one whose request head has not arrived, is
    /// closed after this long.
    public var idleTimeout: TimeInterval = 30
    /// Client connections open at once; past it the one idle longest is closed (``ConnectionCap``).
    public var maximumClientConnections = 100
    /// A request's body (at most 64 KB) must have arrived this long after its head, else the
    /// connection is closed: a client trickling a body cannot keep a connection open.
    public var requestBodyTimeout: TimeInterval = 30
    /// A CSV export whose client takes nothing for this long is aborted and its connection freed.
    public var exportStallTimeout: TimeInterval = 30
    /// A CSV export still streaming after this long is aborted and its connection freed.
    public var exportTimeLimit: TimeInterval = 600
    /// What the support desk's customer page (`/desk`) needs: the job's settings (relations,
    /// bundle ids, grace); nil leaves the page saying that lookups are not set up.
    public var deskSettings: Settings?
    /// How long one customer page waits for Apple in all: an order lookup then says Apple did not
    /// answer, another lookup shows what is stored. No database connection is held meanwhile.
    public var deskAppleTimeLimit: TimeInterval = 20
    /// The App Store Server API for the desk's order lookups and Apple's side of a customer;
    /// nil without credentials (order IDs then cannot be looked up).
    public var deskServerAPI: ServerAPILookups?
    /// Google Play's services while Play is on: with a service account the desk asks Google's
    /// Orders API about `GPA.` order ids the job does not hold (SPEC section 18).
    public var deskPlay: PlayServices?
    /// The app's outbox webhook (`RECONCILE_OUTBOX_WEBHOOK_URL`, `RECONCILE_OUTBOX_WEBHOOK_SECRET`):
    /// a decision made in the browser is delivered to it at once, in the background, as the CLI's
    /// is (SPEC section 13); nil leaves the rows to `reconcile outbox deliver` and the next run.
    public var outboxWebhook: ActionOutbox.Webhook?
    /// `RECONCILE_APPROVAL_ABOVE`: decisions above it wait for a second person, as the CLI's do.
    /// `reconcile serve` sets it from the settings.
    public var approval = ApprovalThreshold.none
    /// How a decision made in the pages judges its item again first (SPEC section 6): the job's
    /// rules, from the settings `reconcile serve` has.
    public var judgement: DecisionJudgement
    /// `RECONCILE_BULK_LIMIT`: the most items one confirmation on the queue page decides.
    public var bulkLimit = BulkDecision.defaultLimit
    /// Wrong-token back-off.
    var loginLimits = LoginThrottle.Limits()
    /// The first wait after a client's free wrong tokens (each further miss doubles it).
    public var loginFirstWait: TimeInterval {
        get { loginLimits.firstWait }
        set { loginLimits.firstWait = newValue }
    }

    /// Creates a configuration.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, databaseURL: String?, token: Secret, judgement: DecisionJudgement,
        sessionIdleLifetime: TimeInterval = 8 * 3600, secureCookies: Bool = false,
        logger: Logger = Logger(label: "reconcile.serve")
    ) {
        self.host = host
        self.port = port
        self.databaseURL = databaseURL
        self.token = token
        self.judgement = judgement
        self.sessionIdleLifetime = sessionIdleLifetime
        self.secureCookies = secureCookies
        self.logger = logger
    }

    /// Refuses a token that can be guessed: shorter than 16 characters, or of less than 64 bits
    /// by a simple estimate (length × log2 of its distinct characters), so `aaaaaaaaaaaaaaaa`
    /// or `abababababababab` is refused while 16 random hex digits pass.
    public static func checkTokenStrength(_ token: Secret) throws(WeakTokenError) {
        let scalars = Array(token.value.unicodeScalars)
        guard scalars.count >= 16 else { throw WeakTokenError(problem: "must be at least 16 characters") }
        let distinct = Set(scalars).count
        let bits = Double(scalars.count) * log2(Double(max(distinct, 1)))
        guard bits >= 64 else {
            throw WeakTokenError(
                problem: "is too easy to guess (too few different characters); use 32 random characters, "
                    + "e.g. openssl rand -hex 16")
        }
    }
}

/// `RECONCILE_WEB_TOKEN` is too weak to protect the pages; never says what the token is.
public struct WeakTokenError: Error, CustomStringConvertible {
    /// What is wrong with it.
    public let problem: String

    public var description: String { "RECONCILE_WEB_TOKEN \(problem)" }
}
