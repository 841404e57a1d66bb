import AppStoreSimulator
import ArgumentParser
import Foundation

/// `reconcile-bench play-settings`: the job's Google Play settings for the bench's Play uploads
/// (``PlaySignaturesCommand/package``, signed with the simulator's licence key), as `NAME=value`
/// lines for `env`: the package and its licence key, local verification only. No service account:
/// a night with Play then measures the job, not a simulated Developer API.
struct PlaySettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play-settings",
        abstract: "Print GOOGLE_PLAY_PACKAGE_NAMES and GOOGLE_PLAY_LICENSE_KEYS for the bench's Play uploads.")

    @OptionGroup var sim: SimulatorStateOptions

    func run() throws {
        let package = PlaySignaturesCommand.package
        let simulator = try AppStoreSimulator(
            configuration: .init(stateDirectory: sim.directory, playPackageNames: [package]))
        // The public half of the key the night's purchases are signed with (made here if none yet).
        let key = try simulator.play.licenseKey(for: package).publicKeyBase64
        print("GOOGLE_PLAY_PACKAGE_NAMES=\(package)")
        print("GOOGLE_PLAY_LICENSE_KEYS=\(package)=\(key)")
    }
}
