import Postgres

/// Lends a database connection for one short step at a time, so that work which also waits on
/// the network (the desk asking Apple) never holds a connection while it waits: the review pages
/// lend one of their pool's for each step, the command line its one connection.
public struct ConnectionLender: Sendable {
    public typealias Step = @Sendable (Connection) throws -> any Sendable
    private let lend: @Sendable (@escaping Step) async throws -> any Sendable

    /// A lender that runs each step with `lend`, which must run it on a connection that nothing
    /// else uses meanwhile and return what it returned.
    public init(_ lend: @escaping @Sendable (@escaping Step) async throws -> any Sendable) {
        self.lend = lend
    }

    /// Runs one step on a lent connection.
    @discardableResult
    public func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        guard let value = try await lend({ try body($0) }) as? T else {
            preconditionFailure("a ConnectionLender returned another value than its step's")
        }
        return value
    }

    /// Every step on `connection` (the command line's own: nobody else waits for it).
    public static func holding(_ connection: Connection) -> ConnectionLender {
        let held = HeldConnection(connection: connection)
        return ConnectionLender { step in try step(held.connection) }
    }
}

/// The caller's connection, used by one step at a time (the steps of one lookup run in order).
private struct HeldConnection: @unchecked Sendable {
    let connection: Connection
}
