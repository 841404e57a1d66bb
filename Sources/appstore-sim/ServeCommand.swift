import AppStoreSimulator
import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve verifyReceipt and the App Store Server API (production and sandbox) and admin endpoints.",
        discussion: """
            Production verifyReceipt is POST /verifyReceipt, the sandbox POST /sandbox/verifyReceipt, on the same \
            port. The Server API (GET /inApps/v2/history/ID, /inApps/v1/transactions/ID, \
            /inApps/v2/refund/lookup/ID, /inApps/v1/lookup/ORDER) is served at the root for production and under \
            /sandbox for the sandbox; tokens must be signed by the key in STATE_DIR/api-key.p8 (created on first \
            start). Admin: POST /sim/receipts (issue a receipt), POST /sim/transactions (create a signed \
            purchase), POST /sim/transactions/ID/refund and /reverse, POST /sim/notifications (sign a \
            Notification V2), GET|POST|DELETE /sim/faults, GET|DELETE /sim/stats, GET /sim/root.pem. Shares are \
            probabilities from 0 to 1. Google Play on the same port: POST /token (the service account's OAuth \
            token endpoint), /androidpublisher/v3/applications/PKG/... (productsv2, subscriptionsv2, \
            voidedpurchases, orders, acknowledge), admin under /sim/play/ (purchases, void, renew, notifications); \
            licence keys and STATE_DIR/play-service-account.json are created on first start.
            """
    )

    @OptionGroup var state: StateOptions

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on; 0 picks a free one.")
    var port = 8090

    @Option(name: .customLong("port-file"), help: "Write the bound port to this file once listening.")
    var portFile: String?

    @Option(
        name: .customLong("shared-secret"),
        help: "Answer 21004 unless the request's password is this (default: $APPSTORE_SIM_SHARED_SECRET).")
    var sharedSecret: String?

    @Option(name: .customLong("latency-ms"), help: "Delay added to every verifyReceipt answer.")
    var latencyMilliseconds = 0

    @Option(name: .customLong("hang-share"), help: "Share of requests that hang for --hang-ms.")
    var hangShare = 0.0

    @Option(name: .customLong("hang-ms"), help: "How long a hang lasts.")
    var hangMilliseconds = 60_000

    @Option(
        name: .customLong("stalled-body-share"),
        help: "Share of requests answered with a 200 head for 4096 bytes and one byte, then stalling for --hang-ms.")
    var stalledBodyShare = 0.0

    @Option(name: .customLong("http-503-share"), help: "Share of requests answered HTTP 503.")
    var http503Share = 0.0

    @Option(name: .customLong("malformed-share"), help: "Share of requests answered with truncated JSON.")
    var malformedShare = 0.0

    @Option(name: .customLong("status-21005-share"), help: "Share of requests answered 21005.")
    var status21005Share = 0.0

    @Option(name: .customLong("status-21100-retryable-share"), help: "Share answered 21100 with is_retryable true.")
    var status21100RetryableShare = 0.0

    @Option(name: .customLong("status-21100-share"), help: "Share answered 21100 with is_retryable false.")
    var status21100Share = 0.0

    @Option(name: .customLong("http-429-share"), help: "Share of Server API requests answered HTTP 429.")
    var http429Share = 0.0

    @Option(name: .customLong("retry-after-ms"), help: "How far ahead a 429's Retry-After points.")
    var retryAfterMilliseconds = 1000

    @Option(name: .customLong("api-error-code"), help: "Answer every Server API request with this error code.")
    var apiErrorCode: Int?

    @Option(name: .customLong("forged-jws-share"), help: "Share of Server API answers with corrupted signatures.")
    var forgedJWSShare = 0.0

    @Option(name: .customLong("api-key-id"), help: "The Server API key id tokens must carry (kid).")
    var apiKeyID = SimulatorAPIKey.defaultKeyID

    @Option(name: .customLong("issuer-id"), help: "The issuer id tokens must carry (iss).")
    var issuerID = SimulatorAPIKey.defaultIssuerID

    @Option(name: .customLong("api-bundle-id"), help: "A bundle id tokens may name (bid); repeat; none accepts any.")
    var apiBundleIDs: [String] = []

    @Option(name: .customLong("page-size"), help: "Signed transactions per Server API page.")
    var pageSize = 20

    @Flag(
        name: .customLong("prepared-answers"),
        help: """
            Serve POST /sim/prepared-answers (receipts, one a line): they are judged then, and verifyReceipt \
            answers them from that, so that a benchmark measures its client and not the simulator.
            """)
    var preparedAnswers = false

    @Option(
        name: .customLong("notification-url"),
        help: """
            POST every notification made (POST /sim/notifications) to this URL as Apple does, retrying one \
            that gets no 200-206 at 1, 12, 24, 48 and 72 hours (production; sandbox: once); Notification History \
            records each attempt's result.
            """)
    var notificationURL: String?

    @Option(
        name: .customLong("notification-retry-scale"),
        help: "Factor applied to Apple's retry waits (0.001 makes an hour 3.6 s), for tests and the demo.")
    var notificationRetryScale = 1.0

    @Option(
        name: .customLong("play-package"),
        help: "A Google Play package name the printed settings name (repeat; default com.example.game).")
    var playPackages: [String] = []

    @Option(
        name: .customLong("play-push-url"),
        help: "Where Google Play notification pushes go when POST /sim/play/notifications names no url.")
    var playPushURL: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error.")
    var logLevel = "info"

    func validate() throws {
        if let notificationURL,
            URL(string: notificationURL).map({ ["http", "https"].contains($0.scheme) && $0.host != nil }) != true
        {
            throw ValidationError("--notification-url \(notificationURL): expected an http(s) URL")
        }
        guard notificationRetryScale >= 0, notificationRetryScale <= 1000 else {
            throw ValidationError("--notification-retry-scale takes a factor between 0 and 1000")
        }
        if let playPushURL,
            URL(string: playPushURL).map({ ["http", "https"].contains($0.scheme) && $0.host != nil }) != true
        {
            throw ValidationError("--play-push-url \(playPushURL): expected an http(s) URL")
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let faults = SimulatorFaults(
            latencyMilliseconds: latencyMilliseconds, hangShare: hangShare, hangMilliseconds: hangMilliseconds,
            stalledBodyShare: stalledBodyShare, http503Share: http503Share, malformedShare: malformedShare,
            status21005Share: status21005Share, status21100RetryableShare: status21100RetryableShare,
            status21100Share: status21100Share,
            http429Share: http429Share, retryAfterMilliseconds: retryAfterMilliseconds, apiErrorCode: apiErrorCode,
            forgedJWSShare: forgedJWSShare)
        let configuration = SimulatorConfiguration(
            host: host, port: port, stateDirectory: state.url,
            sharedSecret: sharedSecret ?? ProcessInfo.processInfo.environment["APPSTORE_SIM_SHARED_SECRET"],
            faults: faults, logger: Logger(label: "appstore-sim"), apiKeyID: apiKeyID, issuerID: issuerID,
            apiBundleIDs: Set(apiBundleIDs), pageSize: pageSize, preparedAnswers: preparedAnswers,
            notificationURL: notificationURL, notificationRetryScale: notificationRetryScale,
            playPackageNames: playPackages, playPushURL: playPushURL)
        let simulator = try AppStoreSimulator(configuration: configuration)
        // Made (or loaded) before listening, so that the banner is printed at once.
        try await simulator.play.prepareKeys()
        let rootPath = simulator.rootCertificatePath ?? "-"
        let keyPath = simulator.apiPrivateKeyPath ?? "-"
        let keyID = simulator.apiKey.keyID
        let issuerID = simulator.apiKey.issuerID
        let host = self.host
        let portFile = self.portFile
        let application = simulator.buildApplication { port in
            // Written unbuffered: scripts read this output to learn the port.
            let banner = """
                appstore-sim listening on http://\(host):\(port)
                  production verifyReceipt: POST http://\(host):\(port)/verifyReceipt
                  sandbox verifyReceipt:    POST http://\(host):\(port)/sandbox/verifyReceipt
                  trust root certificate:   APPLE_ROOT_CERTIFICATES=\(rootPath)
                  Server API:               APPSTORE_API_URL=http://\(host):\(port) \
                APPSTORE_API_SANDBOX_URL=http://\(host):\(port)/sandbox
                  Server API key:           APPSTORE_KEY_ID=\(keyID) APPSTORE_ISSUER_ID=\(issuerID) \
                APPSTORE_PRIVATE_KEY_FILE=\(keyPath)
                \(Self.playBanner(simulator))
                """
            FileHandle.standardOutput.write(Data(banner.utf8))
            if let portFile { try? "\(port)\n".write(toFile: portFile, atomically: true, encoding: .utf8) }
        }
        // SIGTERM/SIGINT cancel the server outright rather than shutting it down gracefully:
        // a graceful shutdown would wait out every injected hang (a minute by default).
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: application, successTerminationBehavior: .gracefullyShutdownGroup)],
                cancellationSignals: [.sigterm, .sigint],
                logger: Logger(label: "appstore-sim")))
        do {
            try await group.run()
        } catch is CancellationError {
            // Stopped by a signal.
        }
    }

    /// The Google Play settings lines (no secret: the licence keys printed are public keys).
    private static func playBanner(_ simulator: AppStoreSimulator) -> String {
        guard let settings = try? simulator.play.settings() else { return "  Google Play:              unavailable\n" }
        return """
              Google Play API:          GOOGLE_PLAY_API_URL=\(settings.apiURL) \
            GOOGLE_PLAY_PACKAGE_NAMES=\(settings.packageNames.joined(separator: ","))
              Google Play keys:         GOOGLE_PLAY_LICENSE_KEYS=\(settings.licenseKeysSetting)
              Google Play account:      GOOGLE_PLAY_SERVICE_ACCOUNT_FILE=\(settings.serviceAccountFile ?? "-")

            """
    }
}
