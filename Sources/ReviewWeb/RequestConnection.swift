import Hummingbird
import NIOCore

/// The connection a request came on, as both request contexts (the pages' and the receiver's)
/// keep it: the peer's address for the logs and the login back-off, and the channel, to close it
/// when a request or its body is not done in time.
struct RequestConnection: Sendable {
    /// The peer's IP address; "unknown" without one.
    let clientAddress: String
    let channel: any Channel

    init(_ source: ApplicationRequestContextSource) {
        clientAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        channel = source.channel
    }
}
