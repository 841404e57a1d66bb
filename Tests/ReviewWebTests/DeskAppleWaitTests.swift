import AppStore
import AppStoreSimulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
@testable import Reconciliation
@testable import ReviewWeb
import TestSupport
import Testing

/// The customer page while Apple does not answer (an App Store Server API that sends its 200
/// head and then a byte every 100 s): no database connection is held while the page waits for
/// Apple, and the page's wait for Apple is bounded.
@Suite("Support desk while Apple hangs")
struct DeskAppleWaitTests {
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs `test` with the pages on one database connection and the desk's Server API at a
    /// trickling server.
    static func withHangingApple(
        appleTimeLimit: TimeInterval,
        _ test: @escaping @Sendable (any TestClientProtocol, TricklingHTTPServer) async throws -> Void
    ) async throws {
        let database = try TestDatabase.create("desk_apple_wait")
        _ = try Schema.migrate(try database.connect())
        let state = Scratch.root.appendingPathComponent("sim-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        var simLogger = Logger(label: "sim")
        simLogger.logLevel = .critical
        // The simulator only makes the key and the CA's files; Apple is the trickling server.
        let sim = try AppStoreSimulator(configuration: .init(stateDirectory: state, logger: simLogger))
        let apple = try TricklingHTTPServer(body: .chunkedForever)
        defer { apple.stop() }
        let values = [
            "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": "com.example.game",
            "APPSTORE_API_URL": "http://127.0.0.1:\(apple.port)", "APPSTORE_API_SANDBOX_URL": "http://127.0.0.1:\(apple.port)",
            "APPSTORE_KEY_ID": sim.configuration.apiKeyID, "APPSTORE_ISSUER_ID": sim.configuration.issuerID,
            "APPSTORE_PRIVATE_KEY_FILE": state.appendingPathComponent(SimulatorAPIKey.privateKeyFileName).path,
            "APPLE_ROOT_CERTIFICATES": state.appendingPathComponent(SimulatorCA.FileName.rootCertificate).path,
            "RECONCILE_APPLE_TIMEOUT": "1h", "RECONCILE_MAX_ATTEMPTS": "1",
        ]
        let settings = try Settings(lookup: { values[$0] })
        try await AppleServices.withVerifierAndServerAPI(settings: settings, logger: quiet) { _, api in
            var configuration = ReviewWebConfiguration(
                host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored)
            configuration.maximumConnections = 1
            configuration.connectionWaitTimeout = 3
            configuration.deskSettings = settings
            configuration.deskServerAPI = api
            configuration.deskAppleTimeLimit = appleTimeLimit
            let application = try buildApplication(configuration: configuration)
            try await application.test(.live) { client in try await test(client, apple) }
        }
    }

    /// While an order lookup waits for Apple, the queue page still gets the only connection.
    @Test func anOrderLookupWaitingForAppleHoldsNoConnection() async throws {
        try await Self.withHangingApple(appleTimeLimit: 3_600) { client, apple in
            let cookie = try await ReviewWebTests.login(client)
            let lookup = Task { try await ReviewWebTests.get(client, "/desk?q=MK5TTY6V5X", cookie: cookie) }
            try await apple.waitForRequests(1)
            // On a socket of its own: the test client's connection is busy with the lookup.
            let port = try #require(client.port)
            let request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(cookie)\r\nConnection: close\r\n\r\n"
            let queue = try await onOwnThread { try RequestBoundsTests.send(request, port: port) }
            #expect(queue.hasPrefix("HTTP/1.1 200"), "the desk's wait for Apple kept the only connection: \(queue.prefix(80))")
            // Apple hangs up: the lookup ends, so the server can stop.
            apple.stop()
            _ = try? await lookup.value
        }
    }

    /// The page's wait for Apple ends at its limit: the order page says Apple did not answer.
    @Test func theDesksWaitForAppleIsBounded() async throws {
        try await Self.withHangingApple(appleTimeLimit: 1) { client, apple in
            let cookie = try await ReviewWebTests.login(client)
            let response = try await ReviewWebTests.get(client, "/desk?q=MK5TTY6V5X", cookie: cookie)
            #expect(response.status == .serviceUnavailable)
            #expect(apple.requests >= 1)
        }
    }
}
