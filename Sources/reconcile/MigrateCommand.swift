import ArgumentParser
import Foundation
import Postgres
import Reconciliation

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Create or update schema `reconcile` from the migrations built into this program.",
        discussion: """
            Applies pending migrations in order, each in its own transaction, and records them with a \
            checksum in reconcile.schema_migrations. Up to date: does nothing. An applied migration \
            that was edited since: refuses. Two at once: the second waits, then finds nothing to do. \
            Connects with DATABASE_URL (a libpq URI or conninfo; unset: libpq's PG* variables), read like \
            every command's settings: the environment, then --config.
            """
    )

    @OptionGroup var common: CommonOptions

    @OptionGroup var config: ConfigFileOptions

    @Flag(help: "List the migrations built into this program and exit.")
    var list = false

    func run() async throws {
        if list {
            for migration in try Schema.migrations() { print(migration.name) }
            return
        }
        try await common.run { _ in
            let settings = try await config.settings(requireBundleIDs: false)
            let connection = try settings.connect()
            let outcome = try Schema.migrate(connection)
            try settings.approvalAbove.recordAtStart("migrate", on: connection)
            if outcome.applied.isEmpty {
                print("schema reconcile is up to date (\(outcome.alreadyApplied.count) migrations applied)")
            } else {
                for name in outcome.applied { print("applied \(name)") }
            }
        }
    }
}
