import ArgumentParser

/// `reconcile notifications`: App Store Server Notifications the job keeps (SPEC section 14).
struct NotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "Receive Apple's notifications, recover those the app's endpoint missed, and answer refund requests.",
        subcommands: [NotificationsSyncCommand.self, NotificationsReceiveCommand.self]
    )
}
