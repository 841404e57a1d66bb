import Foundation

/// Slows down token guessing: after a few wrong tokens from one client address, that client must
/// wait before its next try, twice as long after each further miss; and when wrong tokens pour
/// in from everywhere (many addresses, as a botnet would guess), every client waits. A try made
/// while waiting is refused without looking at the token, so it teaches a guesser nothing.
actor LoginThrottle {
    /// How many misses are free and how the waits grow.
    struct Limits: Sendable {
        /// Wrong tokens a client may send before it has to wait.
        var freeMisses = 5
        /// The first wait; each further miss doubles it.
        var firstWait: TimeInterval = 1
        /// The longest wait.
        var longestWait: TimeInterval = 300
        /// Wrong tokens from all clients within `globalWindow` beyond which everyone waits.
        var globalMisses = 100
        /// The span `globalMisses` is counted over.
        var globalWindow: TimeInterval = 60
        /// How long everyone waits once `globalMisses` is passed.
        var globalWait: TimeInterval = 30

        init() {}
    }

    private struct Client {
        var misses = 0
        var waitUntil = Date.distantPast
        var lastMiss = Date.distantPast
    }

    private let limits: Limits
    private var clients: [String: Client] = [:]
    private var recentMisses: [Date] = []
    private var everyoneWaitsUntil = Date.distantPast
    /// Addresses remembered at most; the oldest are forgotten first.
    private let capacity = 10_000

    init(limits: Limits) {
        self.limits = limits
    }

    /// Lets `client` try a token now (nil), or says how many seconds it must wait first. A try
    /// let through counts as a miss until ``recordSuccess(client:)``: a hundred guesses sent at
    /// once are counted before any of them is checked, not after.
    func admit(client: String, now: Date = Date()) -> TimeInterval? {
        let until = max(clients[client]?.waitUntil ?? .distantPast, everyoneWaitsUntil)
        if until > now { return until.timeIntervalSince(now) }
        recordMiss(client: client, now: now)
        return nil
    }

    private func recordMiss(client: String, now: Date) {
        var entry = clients[client] ?? Client()
        entry.misses += 1
        entry.lastMiss = now
        if entry.misses >= limits.freeMisses {
            let doublings = Double(min(entry.misses - limits.freeMisses, 30))
            entry.waitUntil = now.addingTimeInterval(min(limits.firstWait * pow(2, doublings), limits.longestWait))
        }
        if clients[client] == nil, clients.count >= capacity, let oldest = clients.min(by: { $0.value.lastMiss < $1.value.lastMiss }) {
            clients[oldest.key] = nil
        }
        clients[client] = entry
        recentMisses.removeAll { $0 < now.addingTimeInterval(-limits.globalWindow) }
        recentMisses.append(now)
        if recentMisses.count > limits.globalMisses {
            everyoneWaitsUntil = now.addingTimeInterval(limits.globalWait)
            recentMisses.removeAll()
        }
    }

    /// Forgets `client`'s misses after it gave the right token.
    func recordSuccess(client: String) {
        clients[client] = nil
        if !recentMisses.isEmpty { recentMisses.removeLast() }
    }
}
