import AppStoreSimulator
import ArgumentParser
import Foundation
import Logging

@main
struct AppStoreSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appstore-sim",
        abstract: "A local App Store for tests and demos: verifyReceipt with Apple's behaviour, and receipts signed by its own CA.",
        subcommands: [ServeCommand.self, ReceiptCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}

/// Where the CA lives; shared by both commands so that `receipt` signs what `serve` verifies.
struct StateOptions: ParsableArguments {
    @Option(
        name: .customLong("state-dir"),
        help: "Directory holding the CA keys and certificates (created when missing). Trust <dir>/root.pem.")
    var stateDirectory: String = ".appstore-sim"

    var url: URL { URL(fileURLWithPath: stateDirectory, isDirectory: true) }
}
