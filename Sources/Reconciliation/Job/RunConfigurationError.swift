/// A failure that stops the run because the configuration is wrong (exit 64).
public struct RunConfigurationError: Error, CustomStringConvertible {
    /// What to fix.
    public let description: String
    /// Creates the error.
    public init(_ description: String) { self.description = description }
}
