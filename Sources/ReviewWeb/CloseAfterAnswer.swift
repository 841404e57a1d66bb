import Hummingbird
import NIOCore
import NIOHTTPTypes

/// Ends a connection's output once an answer that says `Connection: close` has been written:
/// Hummingbird ends a connection only when the request said so. A request whose body could not be
/// parsed (a malformed chunk) leaves nothing on its connection that can be read as a next request,
/// so its 400 page says `Connection: close`, and this handler makes that true after the page is
/// sent (closing the channel before the page, as the pages once did, sent no answer at all). Only
/// the output is closed: the client reads the answer to its end, while what it may still be
/// sending (the rest of a refused large body) is read and dropped instead of resetting the
/// connection under the answer; the idle timeout ends the rest.
final class CloseAfterAnswerHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var closing = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            closing = head.headerFields[.connection]?.lowercased() == "close"
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            guard closing else {
                context.write(data, promise: promise)
                return
            }
            closing = false
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.cascade(to: promise)
            context.writeAndFlush(data, promise: written)
            let channel = context.channel
            written.futureResult.whenComplete { _ in channel.close(mode: .output, promise: nil) }
        }
    }
}
