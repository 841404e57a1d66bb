import Foundation

/// The decoded payload of a signed app transaction (`JWSAppTransactionDecodedPayload`): proof
/// that a customer downloaded the app, with the original version they bought.
public struct AppTransaction: Codable, Hashable, Sendable {
    /// The environment the app was downloaded in (`Production`, `Sandbox`, `Xcode`).
    public var receiptType: AppStoreEnvironment?
    /// The app's Apple id (absent outside production).
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app version the transaction was made for.
    public var applicationVersion: String?
    /// The App Store Connect version identifier.
    public var versionExternalIdentifier: Int64?
    /// When the App Store signed this app transaction; validity is checked at this time.
    public var receiptCreationDate: Date?
    /// When the customer first obtained the app (Xcode writes year 0001).
    public var originalPurchaseDate: Date?
    /// The app version the customer first obtained.
    public var originalApplicationVersion: String?
    /// The device verification hash.
    public var deviceVerification: String?
    /// The nonce mixed into `deviceVerification`.
    public var deviceVerificationNonce: UUID?
    /// When the customer pre-ordered the app.
    public var preorderDate: Date?
    /// The app download's unique id.
    public var appTransactionId: String?
    /// The platform of the original purchase (`iOS`, `macOS`, …).
    public var originalPlatform: String?

    /// An empty payload; set the fields that apply.
    public init() {}
}
