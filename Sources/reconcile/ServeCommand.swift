import ArgumentParser
import Foundation
import Postgres
import Reconciliation
import ReviewWeb

/// `reconcile serve`: the review web pages for support staff (SPEC section 8).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the review queue web pages.",
        discussion: """
            Staff log in with RECONCILE_WEB_TOKEN (at least 16 characters) and their name, which is recorded \
            with every decision; or, with RECONCILE_WEB_USERS_FILE (one `name:hash` a line, the hash from \
            `reconcile web-user NAME`), each with their own name and password, and the team token is not accepted: \
            use it when decisions wait for a second person (RECONCILE_APPROVAL_ABOVE), so that the second person \
            is one. Sessions live in memory: a restart logs everyone out. Listens on loopback by \
            default; put it behind a TLS proxy (and pass --secure-cookies) to reach it from elsewhere; the proxy \
            must pass the public host on as Host or X-Forwarded-Host, since form posts from another origin \
            are refused. Stops \
            gracefully on SIGTERM or SIGINT.
            """
    )

    @Option(help: "Address and port to listen on (port 0 picks a free one).")
    var listen = "127.0.0.1:8080"

    @Flag(help: "Mark the session cookie Secure (when served over HTTPS through a proxy).")
    var secureCookies = false

    @OptionGroup var config: ConfigFileOptions

    @OptionGroup var common: CommonOptions

    /// `host:port`, `[v6]:port`.
    var address: (host: String, port: Int)? { listenAddress(listen) }

    func validate() throws {
        guard address != nil else { throw ValidationError("--listen \(listen): expected HOST:PORT, e.g. 127.0.0.1:8080") }
    }

    func run() async throws {
        try await common.run(label: "reconcile.serve") { logger in
            let settings = try await config.settings(requireBundleIDs: false)
            // Recorded before the first page: a shell without the setting applies it from now on.
            if settings.approvalAbove.isEnabled {
                let connection = try settings.connect()
                try Schema.requireUpToDate(connection)
                try settings.approvalAbove.recordAtStart("serve", on: connection)
            }
            let users: WebUsers?
            do {
                users = try settings.webUsersFile.map(WebUsers.load(path:))
            } catch {
                throw ConfigurationError("\(error)")
            }
            let token: Secret
            if let users {
                // The team token logs nobody in: every name is a listed person's.
                if settings.webToken != nil {
                    logger.notice("RECONCILE_WEB_TOKEN is ignored: RECONCILE_WEB_USERS_FILE lists who logs in")
                }
                logger.info("logins from the users file", metadata: ["users": "\(users.names.count)"])
                token = Secret(UUID().uuidString + UUID().uuidString)
            } else {
                guard let webToken = settings.webToken else {
                    throw ConfigurationError(
                        "RECONCILE_WEB_TOKEN or RECONCILE_WEB_USERS_FILE is required: how staff log in")
                }
                do {
                    try ReviewWebConfiguration.checkTokenStrength(webToken)
                } catch {
                    throw ConfigurationError("\(error)")
                }
                token = webToken
            }
            let (host, port) = address ?? ("127.0.0.1", 8080)
            var configuration = ReviewWebConfiguration(
                host: host, port: port, databaseURL: settings.databaseURL, token: token,
                judgement: try DecisionJudgement.rules(settings),
                secureCookies: secureCookies, logger: logger)
            configuration.users = users
            // Decisions made in the browser reach the app's webhook as the CLI's do.
            configuration.outboxWebhook = ActionOutbox.Webhook(settings: settings)
            // Decisions in the browser wait for a second person as the CLI's do, and batches are capped alike.
            configuration.approval = settings.approvalAbove
            configuration.bulkLimit = settings.bulkLimit
            // The desk's customer page and the Insights segments judge with the job's rules, which
            // need the apps: their bundle ids, or Play's package names alone (a Play-only job, SPEC 18).
            guard settings.namesAnApp else {
                logger.notice("the desk's customer page is off: neither RECONCILE_BUNDLE_IDS nor GOOGLE_PLAY_PACKAGE_NAMES is set")
                return try await runReviewServer(configuration: configuration)
            }
            configuration.deskSettings = settings
            try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: logger) { _, api in
                try await GooglePlayServices.withServices(settings: settings, logger: logger) { play in
                    var configuration = configuration
                    configuration.deskServerAPI = api
                    configuration.deskPlay = play
                    try await runReviewServer(configuration: configuration)
                }
            }
        }
    }
}

/// `reconcile web-user NAME`: a line of `RECONCILE_WEB_USERS_FILE` for a person, the password
/// read from the terminal without echo (or one line of standard input), never from the command line.
struct WebUserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web-user",
        abstract: "Print a users-file line (name:hash) for a person of the review pages.",
        discussion: """
            The password is asked on the terminal (not echoed), or read as one line of standard input. \
            Append the line to the file RECONCILE_WEB_USERS_FILE names; `reconcile serve` reads it at start.
            """
    )

    @Argument(help: "The person's name, as recorded with their decisions.")
    var name: String

    func validate() throws {
        guard (try? ReviewActor.validatedName(name)) == name else {
            throw ValidationError("\(name): a name is 1 to \(ReviewActor.maximumNameLength) characters, no control or invisible ones, no surrounding spaces")
        }
        guard !name.contains(":") else { throw ValidationError("\(name): a name in the users file cannot hold ':'") }
    }

    func run() throws {
        let password: String?
        if isatty(STDIN_FILENO) == 1, let typed = getpass("Password for \(name): ") {
            password = String(cString: typed)
        } else {
            password = readLine(strippingNewline: true)
        }
        guard let password, password.count >= 12 else {
            throw ValidationError("a password of at least 12 characters is needed")
        }
        print("\(name):\(WebUsers.hash(password: password))")
    }
}
