import AppStoreSimulator
import ArgumentParser
import Foundation
import Logging

/// `--sim-state`: the folder of the simulator `scripts/bench` started, whose CA signs what the
/// commands make (receipts, JWS, notifications) and whose Server API key the job's tokens use.
struct SimulatorStateOptions: ParsableArguments {
    @Option(help: "The simulator's state directory (its CA signs what the command makes; its Server API key).")
    var simState: String

    var directory: URL { URL(fileURLWithPath: simState) }

    /// A simulator over the folder, to sign with (and, started, to answer as Apple).
    func simulator(logger: Logger = Logger(label: "appstore-sim")) throws -> AppStoreSimulator {
        try AppStoreSimulator(configuration: .init(stateDirectory: directory, logger: logger))
    }
}
