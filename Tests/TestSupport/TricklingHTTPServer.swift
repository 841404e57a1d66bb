import Foundation
import Glibc
import Synchronization

/// An HTTP server on 127.0.0.1 that answers every request with a 200 head at once and then its
/// body one byte at a time, `interval` apart: the peer that a deadline on the response head alone
/// never cuts off. Real sockets, one thread per connection; `stop()` closes everything.
public final class TricklingHTTPServer: @unchecked Sendable {
    /// How the body after the 200 head is sent.
    public enum Body: String, Sendable {
        /// `Transfer-Encoding: chunked`, a one-byte chunk every interval, never the last chunk.
        case chunkedForever
        /// `Content-Length: 2`, one byte every interval: complete after two intervals.
        case smallContentLength
    }

    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let body: Body
    private let interval: Duration
    private let state = Mutex<(stopped: Bool, sockets: [Int32], requests: Int)>((false, [], 0))

    public init(body: Body, interval: Duration = .seconds(100)) throws {
        self.body = body
        self.interval = interval
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Connections accepted and not yet closed.
    public var openConnections: Int { state.withLock { $0.sockets.count } }

    /// Requests whose answer's head has been sent.
    public var requests: Int { state.withLock { $0.requests } }

    /// Waits until `count` requests have had their answer's head; throws after `timeout` (an
    /// upper bound that fails a hung test, not a timing margin).
    public func waitForRequests(_ count: Int = 1, timeout: Duration = .seconds(120)) async throws {
        let deadline = ContinuousClock.now + timeout
        while requests < count {
            guard ContinuousClock.now < deadline else {
                throw TestSetupError("the trickling server got \(requests) of \(count) requests in \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops listening and closes every connection.
    ///
    /// Only descriptors still open are shut down, under the lock that `serve` closes them under:
    /// a descriptor number closed earlier may by now be another test's PostgreSQL or HTTP
    /// connection in this process, and shutting that down failed unrelated tests with "server
    /// closed the connection unexpectedly" (a CI failure).
    public func stop() {
        state.withLock { state in
            state.stopped = true
            for socket in state.sockets { shutdown(socket, Int32(SHUT_RDWR)) }
        }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    deinit {
        stop()
        close(listener)
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        while !stopped {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            let accepted = state.withLock { state in
                guard !state.stopped else { return false }
                state.sockets.append(connection)
                return true
            }
            guard accepted else {
                close(connection)
                return
            }
            Thread { [self] in serve(connection) }.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer {
            state.withLock { state in
                state.sockets.removeAll { $0 == connection }
                close(connection)
            }
        }
        // The head and whatever part of the small JSON body came with it.
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.containsHeadEnd {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return }
            received += buffer[0..<count]
        }
        let head = switch body {
        case .chunkedForever: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        case .smallContentLength: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"
        }
        guard send(Array(head.utf8)) else { return }
        state.withLock { $0.requests += 1 }
        var sent = 0
        while !stopped {
            let wake = ContinuousClock.now + interval
            while !stopped, ContinuousClock.now < wake { usleep(20_000) }
            if stopped { return }
            let bytes: [UInt8] = switch body {
            case .chunkedForever: Array("1\r\nx\r\n".utf8)
            case .smallContentLength: sent < 2 ? [UInt8(ascii: "k")] : []
            }
            if bytes.isEmpty { continue }
            guard send(bytes) else { return }
            sent += 1
        }

        func send(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
        }
    }
}

extension [UInt8] {
    fileprivate var containsHeadEnd: Bool {
        guard count >= 4 else { return false }
        for index in 0...(count - 4) where self[index] == 13 && self[index + 1] == 10 && self[index + 2] == 13
            && self[index + 3] == 10
        {
            return true
        }
        return false
    }
}

/// Runs blocking work (a socket read with a timeout, a sleep) on a thread of its own and awaits
/// it: on Swift's cooperative pool, as many blocked tasks as cores (two here) would starve the
/// server under test of the threads it needs to answer.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
