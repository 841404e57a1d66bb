/// The columns of a result: names and type OIDs, shared by all of its rows.
public final class Columns: Sendable {
    /// Column names, in order.
    public let names: [String]
    /// Column type OIDs, in order.
    public let types: [UInt32]
    private let indexByName: [String: Int]

    init(names: [String], types: [UInt32]) {
        self.names = names
        self.types = types
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where index[name] == nil { index[name] = position }
        indexByName = index
    }

    /// The position of a column, if the result has it.
    public func index(of name: String) -> Int? { indexByName[name] }
}

/// One row of a result, holding its fields as text until decoded.
public struct Row: Sendable {
    /// The result's columns.
    public let columns: Columns
    /// Each field's text; nil for SQL NULL.
    public let fields: [String?]

    /// Decodes the field at a position.
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, at index: Int) throws -> T {
        guard fields.indices.contains(index) else {
            throw PostgresError(kind: .usage, message: "row has \(fields.count) columns; asked for column \(index)")
        }
        return try T.decode(postgresText: fields[index], type: columns.types[index], column: columns.names[index])
    }

    /// Decodes the field of a named column.
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, _ name: String) throws -> T {
        guard let index = columns.index(of: name) else {
            throw PostgresError(kind: .usage, message: "result has no column \(name)")
        }
        return try decode(type, at: index)
    }

    /// Decodes the field of a named column (shorthand for `decode(_:_:)`).
    public subscript<T: PostgresDecodable>(_ name: String, as type: T.Type = T.self) -> T {
        get throws { try decode(type, name) }
    }
}
