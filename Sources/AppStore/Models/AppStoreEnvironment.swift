/// The App Store environment: what a JWS payload names (`environment`), what a verifyReceipt answer
/// names, the store of an app receipt, and the endpoint asked. The one environment type of Apple's
/// data; ``init(receiptEnvironment:)`` is the one mapping from a receipt's spelling.
///
/// `Xcode` and `LocalTesting` data is never real money; the verifier rejects it.
public struct AppStoreEnvironment: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The value exactly as Apple sent it.
    public var rawValue: String
    /// Wraps a raw value; values Apple adds later are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { String(describing: rawValue) }

    /// Real purchases.
    public static let production = AppStoreEnvironment(rawValue: "Production")
    /// Sandbox purchases (TestFlight, App Review, sandbox accounts).
    public static let sandbox = AppStoreEnvironment(rawValue: "Sandbox")
    /// StoreKit testing in Xcode.
    public static let xcode = AppStoreEnvironment(rawValue: "Xcode")
    /// Apple's libraries' local test data.
    public static let localTesting = AppStoreEnvironment(rawValue: "LocalTesting")

    /// The store of a receipt or a verifyReceipt answer, read case-insensitively: `Production`, or
    /// `Sandbox` (verifyReceipt's spelling) and `ProductionSandbox` (a receipt's own attribute 0)
    /// for the sandbox; nil for anything else (an Xcode StoreKit receipt, a value Apple adds later),
    /// which is never real money.
    public init?(receiptEnvironment raw: String) {
        switch raw.lowercased() {
        case "production": self = .production
        case "sandbox", "productionsandbox": self = .sandbox
        default: return nil
        }
    }
}
