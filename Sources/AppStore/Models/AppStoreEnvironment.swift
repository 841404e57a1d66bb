/// The App Store environment a JWS payload names (`environment`).
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
}
