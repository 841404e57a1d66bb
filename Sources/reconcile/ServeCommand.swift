import ArgumentParser
import Foundation
import Reconciliation
import ReviewWeb

/// `reconcile serve`: the review web pages for support staff (SPEC section 8).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the review queue web pages.",
        discussion: """
            Staff log in with RECONCILE_WEB_TOKEN (at least 16 characters) and their name, which is recorded \
            with every decision. Sessions live in memory: a restart logs everyone out. Listens on loopback by \
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
            guard let token = settings.webToken else {
                throw ConfigurationError("RECONCILE_WEB_TOKEN is required: the token staff log in with")
            }
            do {
                try ReviewWebConfiguration.checkTokenStrength(token)
            } catch {
                throw ConfigurationError("\(error)")
            }
            let (host, port) = address ?? ("127.0.0.1", 8080)
            var configuration = ReviewWebConfiguration(
                host: host, port: port, databaseURL: settings.databaseURL, token: token,
                secureCookies: secureCookies, logger: logger)
            // Decisions made in the browser reach the app's webhook as the CLI's do.
            configuration.outboxWebhook = ActionOutbox.Webhook(settings: settings)
            // Decisions in the browser wait for a second person as the CLI's do, and batches are capped alike.
            configuration.approval = settings.approvalAbove
            configuration.bulkLimit = settings.bulkLimit
            // The desk's customer page judges with the job's rules, which need the app's bundle ids.
            guard !settings.bundleIDs.isEmpty else {
                logger.notice("the desk's customer page is off: RECONCILE_BUNDLE_IDS is not set")
                return try await runReviewServer(configuration: configuration)
            }
            configuration.deskSettings = settings
            try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: logger) { _, api in
                var configuration = configuration
                configuration.deskServerAPI = api
                try await runReviewServer(configuration: configuration)
            }
        }
    }
}
