import Hummingbird
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Bounds the TCP connections a server holds open at once (the review pages and the notification
/// receiver each have one), so that a client opening connections and sending nothing cannot use
/// up the process's file descriptors and leave real requests unanswered: with `ulimit -n 200`,
/// 260 idle connections from one client kept Apple's POSTs from being accepted at all.
///
/// A new connection beyond the cap is let in, and the connection idle longest (no request in
/// progress, or no request head yet) is closed to make room: the newcomer is the likeliest to be
/// a real client (Apple sends its request as soon as it connects), and whoever holds idle
/// connections only loses them sooner. When every connection is in the middle of a request, the
/// newcomer is the one closed.
final class ConnectionCap: Sendable {
    /// The most connections open at once.
    let limit: Int
    private let state = Mutex(State())

    private struct State {
        var open: [ObjectIdentifier: Entry] = [:]
        var serial: UInt64 = 0
    }

    private struct Entry {
        let channel: any Channel
        var requestInProgress = false
        /// Orders idle connections: the smallest has been idle longest.
        var idleSince: UInt64
    }

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The connections open now (for tests).
    var openConnections: Int { state.withLock { $0.open.count } }

    /// The handler each connection's pipeline gets (`HTTP1Channel.Configuration`'s additional
    /// handlers, after the HTTP codec, so it sees where requests begin and their answers end).
    func handler() -> any RemovableChannelHandler {
        ConnectionCapHandler(cap: self)
    }

    /// Admits `channel`: the connection to close to make room for it (perhaps itself), if any.
    fileprivate func admit(_ channel: any Channel) -> (any Channel)? {
        state.withLock { state in
            state.serial += 1
            state.open[ObjectIdentifier(channel)] = Entry(channel: channel, idleSince: state.serial)
            guard state.open.count > limit else { return nil }
            let idlest = state.open.values.filter { !$0.requestInProgress && $0.channel !== channel }
                .min { $0.idleSince < $1.idleSince }
            let victim = idlest?.channel ?? channel
            state.open[ObjectIdentifier(victim)] = nil
            return victim
        }
    }

    fileprivate func requestBegan(on channel: any Channel) {
        state.withLock { state in state.open[ObjectIdentifier(channel)]?.requestInProgress = true }
    }

    fileprivate func answerEnded(on channel: any Channel) {
        state.withLock { state in
            state.serial += 1
            state.open[ObjectIdentifier(channel)]?.requestInProgress = false
            state.open[ObjectIdentifier(channel)]?.idleSince = state.serial
        }
    }

    fileprivate func closed(_ channel: any Channel) {
        _ = state.withLock { state in state.open.removeValue(forKey: ObjectIdentifier(channel)) }
    }
}

/// One connection's part in its server's ``ConnectionCap``.
private final class ConnectionCapHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let cap: ConnectionCap
    private var admitted = false

    init(cap: ConnectionCap) {
        self.cap = cap
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
    }

    private func admit(_ context: ChannelHandlerContext) {
        guard !admitted else { return }
        admitted = true
        cap.admit(context.channel)?.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        cap.closed(context.channel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cap.closed(context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { cap.requestBegan(on: context.channel) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { cap.answerEnded(on: context.channel) }
        context.write(data, promise: promise)
    }
}
