import ArgumentParser
import Foundation
import Logging
import Postgres
import Reconciliation
import ReviewWeb

/// `reconcile notifications receive --listen HOST:PORT [--path /apple/notifications]`: Apple's
/// notifications in real time (SPEC section 16).
struct NotificationsReceiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive App Store Server Notifications V2, store, forward and act on them the same hour.",
        discussion: """
            Listens for Apple's POSTs of {"signedPayload": "…"} on --path. Each body is verified with the \
            JWS rules (Apple's chain and OIDs, a bundle id in RECONCILE_BUNDLE_IDS, Production or Sandbox), \
            stored once per notificationUUID in reconcile.notifications, and answered 200 only after that \
            commit; a body that does not verify gets 400 and is logged with the reason, one over 256 KB \
            gets 413. Types the job does not know are stored and acknowledged.

            The same process applies what it stored (as the nightly run would), answers CONSUMPTION_REQUESTs \
            within a minute with RECONCILE_CONSUMPTION_ANSWERS=on and the Server API credentials, judges the \
            transactions the notifications brought once RECONCILE_GRACE has passed (a refund still credited \
            is a refunded_delivery review item, a purchase never credited a missed_delivery item), waiting \
            while a nightly run holds the run lock, and, with RECONCILE_NOTIFICATION_FORWARD_URL, forwards \
            every stored body unchanged to the app's own endpoint, retrying until it answers 2xx. After each \
            judgement the policies of RECONCILE_POLICY_FILE (read when the receiver starts) decide the open \
            items they take, as a nightly run's do.

            With Google Play on (GOOGLE_PLAY_PACKAGE_NAMES), --play-path also takes Cloud Pub/Sub's pushes of \
            Play's real-time developer notifications: a push whose ?token= is not RECONCILE_PLAY_PUSH_TOKEN \
            gets 403 (every push does while it is not set); each is stored once per messageId in \
            reconcile.play_notifications and answered 204 after the commit, its data decoded or stored raw. \
            The worker asks the Play Developer API (GOOGLE_PLAY_SERVICE_ACCOUNT_FILE) about the purchase each \
            names, never trusting the notification, stores Google's answer, and judges the purchase as it \
            judges Apple's; without a service account the notifications are kept, not acted on.

            Listens on loopback by default: Apple posts over HTTPS (TLS 1.2 or later) only, so put a TLS \
            proxy in front (docs/operations.md). Stops gracefully on SIGTERM or SIGINT.
            """
    )

    @Option(help: "Address and port to listen on (port 0 picks a free one).")
    var listen = "127.0.0.1:8091"

    @Option(help: "The path Apple posts to (the URL's path set in App Store Connect).")
    var path = "/apple/notifications"

    @Option(
        name: .customLong("play-path"),
        help: "The path Cloud Pub/Sub pushes Google Play's notifications to, with Play on (the push endpoint's path, without ?token=).")
    var playPath = "/google/rtdn"

    @Option(
        name: .customLong("pass-interval"),
        help: "Seconds between the worker's passes when no notification wakes it (judgements due, forwarding).")
    var passInterval = 5.0

    @Option(
        name: .customLong("forward-first-wait"),
        help: "Seconds before a failed forward is tried again; doubles per attempt, at most an hour.")
    var forwardFirstWait = 30.0

    @Option(
        name: .customLong("forward-timeout"),
        help: "Seconds one forward to the app's endpoint may take, head and body.")
    var forwardTimeout = 10.0

    @Option(
        name: .customLong("metrics-file"),
        help: "Write Prometheus metrics here (node-exporter's textfile collector), at most every 15 s.")
    var metricsFile: String?

    @Option(name: .customLong("port-file"), help: "Write the bound port to this file once listening.")
    var portFile: String?

    @OptionGroup var config: ConfigFileOptions

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard listenAddress(listen) != nil else {
            throw ValidationError("--listen \(listen): expected HOST:PORT, e.g. 127.0.0.1:8091")
        }
        guard path.hasPrefix("/"), !path.contains("?"), !path.contains("#") else {
            throw ValidationError("--path \(path): expected an absolute path such as /apple/notifications")
        }
        guard playPath.hasPrefix("/"), !playPath.contains("?"), !playPath.contains("#") else {
            throw ValidationError("--play-path \(playPath): expected an absolute path such as /google/rtdn")
        }
        guard playPath != path else {
            throw ValidationError("--play-path \(playPath): must differ from --path, Apple's")
        }
        for (name, value) in [
            ("--pass-interval", passInterval), ("--forward-first-wait", forwardFirstWait),
            ("--forward-timeout", forwardTimeout),
        ] where !(value > 0 && value <= 3600) {
            throw ValidationError("\(name) \(value): expected seconds above 0 and at most 3600")
        }
    }

    func run() async throws {
        try await common.run(label: "reconcile.receive") { logger in
            let settings = try await config.settings()
            // Read once, at the start: a file that does not load stops the receiver (exit 64); a
            // changed file takes effect when the receiver is restarted.
            let policies = try settings.policyFile.map { try PolicyFile.load(path: $0) }
            let connection = try settings.connect()
            try Schema.requireUpToDate(connection)
            try settings.approvalAbove.recordAtStart("notifications receive", on: connection)
            let (host, port) = listenAddress(listen) ?? ("127.0.0.1", 8091)
            var configuration = NotificationReceiverConfiguration(
                host: host, port: port, path: path, databaseURL: settings.databaseURL, logger: logger)
            let counters = ReceiverCounters()
            configuration.counters = counters
            let baseConfiguration = configuration
            var timing = ReceiverWorker.Timing()
            timing.metricsFile = metricsFile
            timing.interval = .milliseconds(Int64(passInterval * 1000))
            let forwarder = settings.notificationForwardURL.map { url in
                var endpoint = NotificationForwarder.Endpoint(url: url)
                endpoint.firstWait = .milliseconds(Int64(forwardFirstWait * 1000))
                endpoint.timeout = .milliseconds(Int64(forwardTimeout * 1000))
                return NotificationForwarder(endpoint: endpoint, logger: logger)
            }
            let portFile = self.portFile
            try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: logger) { verifier, api in
                if settings.consumption.enabled, api == nil {
                    logger.notice(
                        "refund requests are not answered: RECONCILE_CONSUMPTION_ANSWERS needs the Server API credentials")
                }
                let answerer = settings.consumption.enabled
                    ? api?.consumptionAnswerer(settings: settings, logger: logger) : nil
                try await GooglePlayServices.withServices(settings: settings, logger: logger) { playServices in
                    var configuration = baseConfiguration
                    // Play's path is served whenever Play is on; without a push token it answers
                    // 403 to every push (Apple's path keeps working), and the log says so.
                    let play = playServices.map { PlayNotificationReceiver(pushToken: $0.settings.pushToken) }
                    if play != nil { configuration.playPath = playPath }
                    if let play, !play.acceptsPushes {
                        logger.warning(
                            "Google Play pushes are refused: RECONCILE_PLAY_PUSH_TOKEN is not set, so \(playPath) answers 403 to every push")
                    }
                    // The worker applies what the listener verified without verifying it again.
                    let verdicts = ListenerVerdicts()
                    let worker = ReceiverWorker(
                        settings: settings,
                        applier: NotificationApplier(verify: verifier.verifyNotification, known: verdicts),
                        answerer: answerer, forwarder: forwarder, policies: policies, timing: timing,
                        counters: counters,
                        play: PlayNotificationWorker(services: playServices, settings: settings, logger: logger),
                        logger: logger)
                    let receiver = NotificationReceiver(
                        forwarding: forwarder != nil, verdicts: verdicts, verify: verifier.verifyNotification)
                    try await runNotificationReceiver(
                        configuration: configuration, receiver: receiver, worker: worker, play: play
                    ) { port in
                        var metadata: Logger.Metadata = [
                            "listen.port": "\(port)", "http.path": "\(path)",
                            "forwarding": "\(forwarder != nil)", "consumption_answers": "\(answerer != nil)",
                        ]
                        if play != nil {
                            metadata["play.path"] = "\(playPath)"
                            metadata["play.api"] = "\(playServices?.settings.apiEnabled == true)"
                        }
                        logger.notice("receiving notifications", metadata: metadata)
                        if let portFile {
                            try? Data("\(port)\n".utf8).write(to: URL(fileURLWithPath: portFile), options: .atomic)
                        }
                    }
                }
            }
        }
    }
}
