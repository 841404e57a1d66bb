import AppStore
import AppStoreSimulator
import ArgumentParser
import Foundation
import Postgres
import Reconciliation

/// Seeds the demo: a game selling coin packs and VIP, a few thousand players, StoreKit 1 clients
/// uploading receipts signed by the local simulator's CA, the ledger the game's backend wrote, and
/// the accidents that leak orders in real life. Deterministic, and a no-op on a seeded database.
@main
struct DemoSeed: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-seed",
        abstract: "Seed a realistic demo dataset (uploads, ledger, catalogue) for scripts/demo.")

    @Option(help: "The simulator's state directory (its CA signs the receipts).")
    var simState: String

    @Option(help: "Number of players.")
    var players = 3000

    @Option(help: "Random seed; the same seed gives the same data.")
    var seed: UInt64 = 42

    @Flag(help: "Print the support desk's demo orders as JSON lines for the simulator's POST /sim/transactions, and exit.")
    var deskOrders = false

    @Option(help: "Print the job's Google Play settings (shell exports) for the simulator at this URL, and exit.")
    var playEnvironment: String?

    @Option(help: "Number of Android players (Google Play).")
    var androidPlayers = 1500

    func run() throws {
        if deskOrders {
            let encoder = AppStoreJSON.encoder()
            encoder.outputFormatting = [.sortedKeys]
            for request in DemoWorld.deskOrderRequests(now: Date()) {
                print(String(decoding: try encoder.encode(request), as: UTF8.self))
            }
            return
        }
        let state = URL(fileURLWithPath: simState)
        let simulator = try AppStoreSimulator(
            configuration: .init(stateDirectory: state, playPackageNames: [PlayDemo.package]))
        if let playEnvironment {
            for (key, value) in try simulator.play.settings(baseURL: playEnvironment).jobEnvironment.sorted(by: { $0.key < $1.key }) {
                print("export \(key)='\(value)'")
            }
            return
        }
        let connection = try Connection(url: ProcessInfo.processInfo.environment["DATABASE_URL"])
        if try connection.queryFirst(DemoWorld.SQL.seeded) != nil {
            print("demo data already seeded")
            return
        }
        let forger = try AppStoreSimulator(configuration: .init())
        var world = DemoWorld(simulator: simulator, forger: forger, random: SplitMix64(seed: seed))
        try world.generate(players: players)
        // Android players after Apple's, from a random source of their own: Apple's half is unchanged.
        var play = PlayDemo(simulator: simulator, random: SplitMix64(seed: seed ^ 0x9_1A7_D3A0), now: world.now)
        try play.generate(players: androidPlayers)
        world.uploads += play.uploads
        world.deliveries += play.deliveries
        world.accidents += play.accidents
        try Data(play.requestLines.utf8).write(to: state.appendingPathComponent(PlayDemo.requestsFile), options: .atomic)
        try connection.transaction {
            try world.write(to: connection)
        }
        print("seeded \(players) players: \(world.uploads.count) uploads, \(world.deliveries.count) deliveries, "
              + "\(world.accidents.count) planted accidents")
        for accident in world.accidents { print("  - \(accident)") }
    }
}
