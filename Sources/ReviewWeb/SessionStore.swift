import Foundation
import Reconciliation

/// Logged-in sessions, kept in memory: a restart logs everyone out, which is acceptable for a
/// staff tool and means no session secret ever touches disk or the database.
actor SessionStore {
    /// One logged-in person.
    struct Session: Sendable {
        /// The cookie value: 256 random bits.
        let id: String
        /// Who is deciding: recorded as the actor of every transition.
        let name: String
        /// Sent back in every POST form and compared in constant time.
        let csrfToken: String
        var expires: Date
        /// The end of the session however busy it is (its absolute lifetime).
        let ends: Date
        /// The session whose login link made this one (nil for a login): logging that one out
        /// ends this one too.
        var madeBy: String? = nil
        /// A one-shot message shown on the next page (what the last action did).
        var flash: Flash?
        /// The language chosen with the switch; nil follows the browser.
        var language: Language?
        /// The time zone chosen in the header (an IANA name); nil uses the language's usual one.
        var timeZone: String?
    }

    /// A message for the next page.
    struct Flash: Sendable {
        let text: String
        let isError: Bool
    }

    /// A single-use login link for another browser (the headless test browser), valid briefly.
    private struct Ticket {
        let name: String
        let next: String
        let expires: Date
        /// The end of the session that made the link, which the link's session keeps.
        let ends: Date
        /// The session that made the link.
        let madeBy: String
    }

    private var sessions: [String: Session] = [:]
    private var tickets: [String: Ticket] = [:]
    private let idleLifetime: TimeInterval
    private let absoluteLifetime: TimeInterval
    /// What the store takes as the time now.
    private let now: @Sendable () -> Date
    /// Oldest sessions are dropped beyond this, so a flood of logins cannot exhaust memory.
    private let capacity = 10_000

    init(idleLifetime: TimeInterval, absoluteLifetime: TimeInterval, now: @escaping @Sendable () -> Date = { Date() }) {
        self.idleLifetime = idleLifetime
        self.absoluteLifetime = absoluteLifetime
        self.now = now
    }

    /// A new session, ending after the absolute lifetime or at `ends` if sooner; `madeBy` is the
    /// session whose login link made it.
    func create(name: String, language: Language? = nil, ends: Date = .distantFuture, madeBy: String? = nil) -> Session {
        purge()
        if sessions.count >= capacity, let oldest = sessions.values.min(by: { $0.expires < $1.expires }) {
            sessions[oldest.id] = nil
        }
        let now = self.now()
        let ends = min(now.addingTimeInterval(absoluteLifetime), ends)
        let session = Session(
            id: Self.randomToken(), name: name, csrfToken: Self.randomToken(),
            expires: min(now.addingTimeInterval(idleLifetime), ends), ends: ends, madeBy: madeBy, flash: nil,
            language: language)
        sessions[session.id] = session
        return session
    }

    /// The live session with this id, its lifetime extended; nil when unknown or expired.
    func session(id: String) -> Session? {
        guard var session = sessions[id] else { return nil }
        let now = self.now()
        guard session.expires > now else {
            sessions[id] = nil
            return nil
        }
        session.expires = min(now.addingTimeInterval(idleLifetime), session.ends)
        sessions[id] = session
        return session
    }

    /// Ends a session (logging out, or a new login in its browser), and with it every session its
    /// login links made, theirs in turn, and the links it made not yet used: a link's session never
    /// outlives the logout of the session that made it.
    func remove(id: String) {
        var ending: Set<String> = [id]
        var next: [String] = [id]
        while let parent = next.popLast() {
            for (child, session) in sessions where session.madeBy == parent && !ending.contains(child) {
                ending.insert(child)
                next.append(child)
            }
        }
        for id in ending { sessions[id] = nil }
        tickets = tickets.filter { !ending.contains($0.value.madeBy) }
    }

    func setFlash(_ flash: Flash, for id: String) {
        sessions[id]?.flash = flash
    }

    /// Remembers a language or time zone (nil leaves it as it was); the session after the change.
    func setPreferences(language: Language?, timeZone: String?, for id: String) -> Session? {
        if let language { sessions[id]?.language = language }
        if let timeZone { sessions[id]?.timeZone = timeZone }
        return sessions[id]
    }

    func takeFlash(for id: String) -> Flash? {
        defer { sessions[id]?.flash = nil }
        return sessions[id]?.flash
    }

    /// A link id that logs one browser in as the session's person within 60 seconds, once. The
    /// session it makes ends when `session` ends: a chain of links never outlives the login.
    func createTicket(for session: Session, next: String) -> String {
        purge()
        let id = Self.randomToken()
        tickets[id] = Ticket(
            name: session.name, next: next, expires: min(now().addingTimeInterval(60), session.ends), ends: session.ends,
            madeBy: session.id)
        return id
    }

    /// Redeems a ticket: a new session (ending with the one that made the link) and where to go;
    /// nil when unknown, used or expired.
    func redeem(ticket id: String) -> (Session, next: String)? {
        guard let ticket = tickets.removeValue(forKey: id), ticket.expires > now() else { return nil }
        return (create(name: ticket.name, ends: ticket.ends, madeBy: ticket.madeBy), ticket.next)
    }

    private func purge() {
        let now = self.now()
        sessions = sessions.filter { $0.value.expires > now }
        tickets = tickets.filter { $0.value.expires > now }
    }

    /// 32 bytes from the system's CSPRNG (getrandom on Linux), hex-encoded.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let word = generator.next() as UInt64
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}

/// Compares two secrets in time that depends only on their lengths, so a timing side channel does
/// not reveal how many leading characters of a guess are right.
func constantTimeEquals(_ left: String, _ right: String) -> Bool {
    let a = Array(left.utf8), b = Array(right.utf8)
    var difference = UInt8(truncatingIfNeeded: a.count ^ b.count) | (a.count == b.count ? 0 : 1)
    for index in 0..<max(a.count, b.count) {
        let x = index < a.count ? a[index] : 0
        let y = index < b.count ? b[index] : 0
        difference |= x ^ y
    }
    return difference == 0
}
