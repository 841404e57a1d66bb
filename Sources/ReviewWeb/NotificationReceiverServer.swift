import Foundation
import Hummingbird
import Logging
import NIOCore
import Reconciliation

/// What `reconcile notifications receive` needs: where to listen, the path Apple posts to, the
/// database, and the limits that bound what a client can make it hold.
public struct NotificationReceiverConfiguration: Sendable {
    /// Address to bind; loopback by default (a TLS proxy in front takes Apple's HTTPS).
    public var host: String
    /// Port to bind; 0 picks a free one.
    public var port: Int
    /// The path Apple posts to (the URL set in App Store Connect, behind the proxy).
    public var path: String
    /// The path Cloud Pub/Sub pushes Google Play's notifications to (`--play-path`); nil while Play
    /// is off (the path is not served).
    public var playPath: String?
    /// libpq URI or conninfo; nil uses libpq's `PG*` variables.
    public var databaseURL: String?
    public var logger: Logger
    /// Database connections the listener may hold at once (the worker has one of its own).
    public var maximumConnections = 4
    /// How long a request waits for a free connection before answering 503 (Apple retries).
    public var connectionWaitTimeout: TimeInterval = 5
    /// PostgreSQL's `statement_timeout` on the listener's statements.
    public var statementTimeout: TimeInterval = 10
    /// A connection with no request in progress, or whose request head has not arrived, is closed
    /// after this long.
    public var idleTimeout: TimeInterval = 30
    /// Client connections open at once; past it the one idle longest is closed (``ConnectionCap``),
    /// so idle connections cannot use up the process's file descriptors.
    public var maximumClientConnections = 100
    /// A request must be read, verified and stored this long after its head arrived, else its
    /// connection is closed unanswered: a client trickling a body cannot hold a connection open.
    public var requestTimeout: TimeInterval = 15
    /// Called after each notification stored, to wake the worker.
    public var onStored: @Sendable () -> Void = {}
    /// Counts every POST's outcome, for the metrics file.
    public var counters = ReceiverCounters()

    public init(host: String, port: Int, path: String, databaseURL: String?, logger: Logger) {
        self.host = host
        self.port = port
        self.path = path
        self.databaseURL = databaseURL
        self.logger = logger
    }
}

/// The request context of the receiver: the connection, to close it at the request's deadline.
public struct ReceiverRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let connection: RequestConnection

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connection = RequestConnection(source)
    }
}

/// Builds the receiver's HTTP application (SPEC section 16): the seam the command runs and tests
/// call. `POST path` takes Apple's `{"signedPayload": "…"}`:
///
/// - `200` once the notification is committed (or was stored before: Apple's retry);
/// - `400` for a body that does not verify (logged with the reason, never stored or trusted);
/// - `413` for a body over 256 KB, refused from its `Content-Length` before it is read;
/// - `503` when the database cannot take it now: Apple retries on 4xx and 5xx.
///
/// With `play` and `configuration.playPath`, `POST playPath?token=…` takes Cloud Pub/Sub's pushes
/// of Google Play's notifications (SPEC section 18, ``PlayNotificationReceiver``):
///
/// - `403` when `token` is not `RECONCILE_PLAY_PUSH_TOKEN` (or none is set), before the body is
///   read: nothing stored;
/// - `204` once the push is committed, once per messageId (a redelivery stores nothing), its data
///   decoded or not (stored raw and counted: Pub/Sub would redeliver a refusal for days);
/// - `400` for a body that is not a Pub/Sub envelope with a message id (nothing to store it under);
/// - `413` over 256 KB, `503` when the database cannot take it now (Pub/Sub redelivers).
public func buildNotificationReceiver(
    configuration: NotificationReceiverConfiguration, receiver: NotificationReceiver,
    play: PlayNotificationReceiver? = nil,
    onServerRunning: (@Sendable (Int) async -> Void)? = nil
) -> some ApplicationProtocol {
    let database = ReviewDatabase(
        url: configuration.databaseURL, maximumConnections: configuration.maximumConnections,
        waitTimeout: .milliseconds(Int64(configuration.connectionWaitTimeout * 1000)),
        statementTimeout: .milliseconds(Int64(configuration.statementTimeout * 1000)),
        // The receiver stores notifications through the connections; it decides no review item
        // there (its policies decide on the worker's connection, with the settings' judgement).
        approval: .none, judgement: .refusingDecisions)
    let router = Router(context: ReceiverRequestContext.self)
    let deadline = TimeAmount.milliseconds(Int64(configuration.requestTimeout * 1000))
    let onStored = configuration.onStored
    let counters = configuration.counters
    router.post(RouterPath(configuration.path)) { request, context -> Response in
        // One deadline for the whole request, body included: past it the connection is closed.
        let channel = context.connection.channel
        let timer = channel.eventLoop.scheduleTask(in: deadline) {
            context.logger.notice(
                "notification request not completed in time; connection closed",
                metadata: ["client.address": "\(context.connection.clientAddress)"])
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        let limit = NotificationReceiver.maximumBodyBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            context.logger.notice(
                "notification refused: payload_too_large",
                metadata: ["client.address": "\(context.connection.clientAddress)", "http.content_length": "\(length)"])
            counters.count("too_large")
            return Response(status: .contentTooLarge, headers: [.connection: "close"])
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            context.logger.notice(
                "notification refused: payload_too_large",
                metadata: ["client.address": "\(context.connection.clientAddress)"])
            counters.count("too_large")
            return Response(status: .contentTooLarge, headers: [.connection: "close"])
        } catch {
            context.logger.notice(
                "notification body unreadable",
                metadata: ["client.address": "\(context.connection.clientAddress)", "error": "\(error)"])
            counters.count("rejected")
            return Response(status: .badRequest, headers: [.connection: "close"])
        }
        let verified: NotificationReceiver.Verified
        switch await receiver.verify(body.readableBytesView) {
        case .failure(let refusal):
            context.logger.notice(
                "notification refused: it does not verify",
                metadata: [
                    "client.address": "\(context.connection.clientAddress)", "reason": "\(refusal)",
                    "http.body_bytes": "\(body.readableBytes)",
                ])
            counters.count("rejected")
            return Response(status: .badRequest)
        case .success(let value):
            verified = value
        }
        do {
            // Through the database itself, which the route keeps alive: its threads stop with it.
            let stored = try await database.lender.run { try receiver.store(verified, on: $0) }
            let outcome: String
            switch stored {
            case .new(let id):
                outcome = "stored"
                counters.count(outcome)
                context.logger.info(
                    "notification stored",
                    metadata: [
                        "notification.id": "\(id)", "notification.uuid": "\(verified.uuid)",
                        "notification.type": "\(verified.type)",
                    ])
                onStored()
            case .duplicate:
                outcome = "duplicate"
                counters.count(outcome)
                context.logger.info(
                    "notification received again; stored before",
                    metadata: ["notification.uuid": "\(verified.uuid)", "notification.type": "\(verified.type)"])
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: outcome + "\n")))
        } catch {
            // Apple retries: nothing is lost by answering 503 now.
            context.logger.error(
                "notification not stored; Apple will retry", metadata: ["error": "\(error)"])
            counters.count("unavailable")
            return Response(status: .serviceUnavailable)
        }
    }
    if let play, let playPath = configuration.playPath {
        router.post(RouterPath(playPath)) { request, context -> Response in
            let channel = context.connection.channel
            let timer = channel.eventLoop.scheduleTask(in: deadline) {
                context.logger.notice(
                    "Play push not completed in time; connection closed",
                    metadata: ["client.address": "\(context.connection.clientAddress)"])
                channel.close(promise: nil)
            }
            defer { timer.cancel() }
            let client: Logger.Metadata = ["client.address": "\(context.connection.clientAddress)"]
            // The token first, compared in constant time: a push without it is not read, and
            // stores nothing. The token itself is never logged (nor the query holding it).
            guard play.authorizes(token: request.uri.queryParameters["token"].map(String.init)) else {
                context.logger.notice(
                    play.acceptsPushes
                        ? "Play push refused: its token is missing or wrong"
                        : "Play push refused: RECONCILE_PLAY_PUSH_TOKEN is not set", metadata: client)
                counters.count(play: .forbidden)
                return Response(status: .forbidden, headers: [.connection: "close"])
            }
            let limit = PlayNotificationReceiver.maximumBodyBytes
            if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
                context.logger.notice("Play push refused: payload_too_large", metadata: client)
                counters.count(play: .tooLarge)
                return Response(status: .contentTooLarge, headers: [.connection: "close"])
            }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: limit)
            } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
                context.logger.notice("Play push refused: payload_too_large", metadata: client)
                counters.count(play: .tooLarge)
                return Response(status: .contentTooLarge, headers: [.connection: "close"])
            } catch {
                context.logger.notice("Play push body unreadable", metadata: client.merging(["error": "\(error)"]) { $1 })
                counters.count(play: .rejected)
                return Response(status: .badRequest, headers: [.connection: "close"])
            }
            let push = play.read(body.readableBytesView)
            do {
                let stored = try await database.lender.run { try play.store(push, on: $0) }
                var metadata: Logger.Metadata = ["play.message_id": "\(push.messageID)", "play.kind": "\(push.kind)"]
                switch stored {
                case .new(let id):
                    counters.count(play: .stored)
                    metadata["play.notification_id"] = "\(id)"
                    if let problem = push.problem {
                        counters.count(play: .undecodable)
                        metadata["play.data_error"] = "\(problem)"
                        context.logger.notice("Play push stored raw: its data is not a developer notification", metadata: metadata)
                    } else {
                        context.logger.info("Play notification stored", metadata: metadata)
                    }
                    if push.needsAsking { onStored() }
                case .duplicate:
                    counters.count(play: .duplicate)
                    context.logger.info("Play notification received again; stored before", metadata: metadata)
                }
                return Response(status: .noContent)
            } catch {
                // Pub/Sub redelivers: nothing is lost by answering 503 now.
                context.logger.error("Play notification not stored; Pub/Sub will redeliver", metadata: ["error": "\(error)"])
                counters.count(play: .unavailable)
                return Response(status: .serviceUnavailable)
            }
        }
    }
    let idle = TimeAmount.milliseconds(Int64(configuration.idleTimeout * 1000))
    let cap = ConnectionCap(limit: configuration.maximumClientConnections)
    return Application(
        router: router,
        server: .http1(configuration: .init(
            additionalChannelHandlers: [cap.handler(), CloseAfterAnswerHandler()], idleTimeout: idle)),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
        onServerRunning: { channel in await onServerRunning?(channel.localAddress?.port ?? 0) },
        logger: configuration.logger)
}

/// Serves the receiver and runs its worker until SIGTERM or SIGINT, then stops both: the
/// listener finishes the requests in flight, the worker its pass.
public func runNotificationReceiver(
    configuration: NotificationReceiverConfiguration, receiver: NotificationReceiver, worker: ReceiverWorker,
    play: PlayNotificationReceiver? = nil, onServerRunning: (@Sendable (Int) async -> Void)? = nil
) async throws {
    let wakeup = ReceiverWakeup()
    var configuration = configuration
    let onStored = configuration.onStored
    configuration.onStored = {
        wakeup.wake()
        onStored()
    }
    let application = buildNotificationReceiver(
        configuration: configuration, receiver: receiver, play: play, onServerRunning: onServerRunning)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await worker.run(wakeup: wakeup) }
        // runService returns on SIGTERM or SIGINT, once the requests in flight are answered.
        try await application.runService()
        group.cancelAll()
        try await group.waitForAll()
    }
}
