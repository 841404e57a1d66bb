import Foundation
import Glibc
import Testing
import TestSupport

/// The test helper that trickles answers shares its process with every other suite: stopping it
/// must touch only its own sockets. It once shut down every descriptor number it had ever
/// accepted, and a number closed earlier was by then another test's PostgreSQL connection
/// ("server closed the connection unexpectedly" in an unrelated test, a CI failure).
@Suite("Trickling HTTP server")
struct TricklingHTTPServerTests {
    @Test func stoppingItLeavesADescriptorItClosedEarlierAlone() async throws {
        let server = try TricklingHTTPServer(body: .chunkedForever, interval: .milliseconds(10))
        defer { server.stop() }
        let client = try LoopbackSocket.connect(port: server.port, timeout: 60)
        let request = Array("POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n".utf8)
        #expect(request.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == request.count)
        try await server.waitForRequests(1)
        close(client)
        // The server notices on a later chunk and closes its end.
        let deadline = ContinuousClock.now + .seconds(60)
        while server.openConnections > 0 {
            guard ContinuousClock.now < deadline else {
                Issue.record("the server never closed the connection its peer left")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        // Lowest numbers first: the number the server closed is among these unless a test
        // running beside this one took it.
        var pairs = [[Int32]]()
        defer { pairs.joined().forEach { close($0) } }
        for _ in 0..<64 {
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { break }
            pairs.append(pair)
        }
        server.stop()
        for pair in pairs {
            let byte: [UInt8] = [42]
            #expect(byte.withUnsafeBytes { send(pair[0], $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) } == 1)
            var received: [UInt8] = [0]
            #expect(received.withUnsafeMutableBytes { recv(pair[1], $0.baseAddress, 1, Int32(MSG_DONTWAIT)) } == 1)
            #expect(received == byte)
        }
    }
}
