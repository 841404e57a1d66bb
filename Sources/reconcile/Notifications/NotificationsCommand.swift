import ArgumentParser

/// `reconcile notifications`: App Store Server Notifications the job keeps (SPEC section 14).
struct NotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "Recover notifications the app's endpoint missed, and answer Apple's refund requests.",
        subcommands: [NotificationsSyncCommand.self]
    )
}
