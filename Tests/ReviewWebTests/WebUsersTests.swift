import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
@testable import Reconciliation
@testable import ReviewWeb
import TestSupport
import Testing

/// SPEC section 8's users file (`RECONCILE_WEB_USERS_FILE`): each person logs in with their own
/// name and password, so that the second person of an approval is another person, not the same
/// one typing another name beside the shared team token (found by a hostile review: "alice"
/// decided a 700 CNY grant, logged in again as "alice2" and approved it herself).
@Suite("Review pages: the users file")
struct WebUsersTests {
    static let meiPassword = "mei's long passphrase"
    static let liPassword = "li's other passphrase"
    /// Hashed once: scrypt takes a tenth of a second a hash.
    static let file = """
        # the review team
        mei:\(WebUsers.hash(password: meiPassword))

        li:\(WebUsers.hash(password: liPassword))
        """

    @Test func aPersonIsKnownByTheirOwnPasswordOnly() throws {
        let users = try WebUsers(parsing: Self.file)
        #expect(users.names == ["li", "mei"])
        #expect(users.authenticate(name: "mei", password: Self.meiPassword) == "mei")
        #expect(users.authenticate(name: " mei ", password: Self.meiPassword) == "mei")
        #expect(users.authenticate(name: "mei", password: Self.liPassword) == nil)
        #expect(users.authenticate(name: "mei2", password: Self.meiPassword) == nil)
        #expect(users.authenticate(name: "li", password: "") == nil)
    }

    @Test(arguments: [
        ("mei", "line 1: expected name:hash"),
        ("mei:secret", "line 1: the hash is not one"),
        (":$scrypt$ln=15,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "line 1: the name is empty"),
        ("mei:$scrypt$ln=30,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "line 1: the hash is not one"),
        ("# nobody\n\n", "lists nobody"),
    ])
    func aBadFileSaysWhichLineAndWhy(text: String, problem: String) {
        #expect {
            _ = try WebUsers(parsing: text)
        } throws: { error in
            "\(error)".hasPrefix("RECONCILE_WEB_USERS_FILE") && "\(error)".contains(problem)
        }
    }

    @Test func aNameListedTwiceIsRefused() throws {
        let line = try #require(Self.file.split(separator: "\n").first { $0.hasPrefix("mei:") })
        #expect {
            _ = try WebUsers(parsing: "\(line)\n\(line)\n")
        } throws: { "\($0)".contains("line 2: mei is listed twice") }
    }

    /// Logging in takes a listed name with its own password; the team token and unlisted names
    /// get in nowhere; the name is the listed one. Then the two-person rule holds: mei's grant
    /// above the threshold waits, mei cannot approve it, li can.
    @Test func onlyListedPeopleLogInAndTheSecondPersonIsAnother() async throws {
        let (database, connection) = try TestDatabase.migrated("reviewweb_users")
        let ids = try ReviewFixtures.seed(on: connection)
        let item = try #require(ids["t-x1"])
        try connection.execute(
            "UPDATE reconcile.review_items SET currency = 'CNY', amount_milli = 700000 WHERE id = $1", [item])
        var configuration = ReviewWebConfiguration(
            host: "127.0.0.1", port: 0, databaseURL: database.url, token: Secret(ReviewWebTests.token), judgement: .asStored)
        configuration.users = try WebUsers(parsing: Self.file)
        configuration.approval = try #require(ApprovalThreshold(parsing: "CNY=648"))
        configuration.loginFirstWait = 0
        let application = try buildApplication(configuration: configuration)
        try await application.test(.router) { client in
            func login(_ name: String, _ password: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/login", method: .post, headers: ReviewWebTests.form,
                    body: ReviewWebTests.encode([("name", name), ("token", password), ("next", "/")]))
            }
            let page = String(buffer: try await client.execute(uri: "/login", method: .get).body)
            #expect(page.contains("Password") && !page.contains("team token"), "\(page)")
            for (name, password) in [("mei", ReviewWebTests.token), ("mei2", Self.meiPassword), ("mei", Self.liPassword)] {
                let refused = try await login(name, password)
                #expect(refused.status == .unauthorized, "\(name)")
                #expect(String(buffer: refused.body).contains("That name and password do not match."))
            }
            let meiLogin = try await login("mei", Self.meiPassword)
            #expect(meiLogin.status == .seeOther)
            let mei = String(try #require(meiLogin.headers[.setCookie]?.split(separator: ";").first))
            let csrf = try await ReviewWebTests.csrf(client, cookie: mei)
            let decided = try await ReviewWebTests.post(
                client, "/items/\(item)/resolve", cookie: mei, [("csrf_token", csrf), ("resolution", "granted")])
            #expect(decided.status == .seeOther)
            let own = try await ReviewWebTests.post(client, "/items/\(item)/approve", cookie: mei, [("csrf_token", csrf)])
            #expect(own.status == .conflict, "the decider cannot approve")

            let liLogin = try await login("li", Self.liPassword)
            let li = String(try #require(liLogin.headers[.setCookie]?.split(separator: ";").first))
            let liCSRF = try await ReviewWebTests.csrf(client, cookie: li)
            let approved = try await ReviewWebTests.post(
                client, "/items/\(item)/approve", cookie: li, [("csrf_token", liCSRF)])
            #expect(approved.status == .seeOther)
        }
        let row = try connection.query(
            "SELECT status, resolved_by, approved_by FROM reconcile.review_items WHERE id = $1", [item])[0]
        #expect(try row.decode(String.self, at: 0) == "resolved")
        #expect(try row.decode(String.self, at: 1) == "mei")
        #expect(try row.decode(String.self, at: 2) == "li")
    }

    /// `reconcile web-user NAME` reads the password from standard input and prints a line the
    /// file takes; a short password is refused.
    @Test func theCommandPrintsALineTheFileTakes() throws {
        func webUser(_ name: String, password: String) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = try ChildProcess.executable("reconcile")
            process.arguments = ["web-user", name]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data((password + "\n").utf8))
            try input.fileHandleForWriting.close()
            let printed = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: printed, as: UTF8.self))
        }
        let (status, line) = try webUser("wang", password: "a passphrase of some length")
        #expect(status == 0)
        let users = try WebUsers(parsing: line)
        #expect(users.authenticate(name: "wang", password: "a passphrase of some length") == "wang")
        #expect(try webUser("wang", password: "short").0 == 64)
    }
}
