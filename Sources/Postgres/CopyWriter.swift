/// Encodes rows in COPY's text format and hands them to libpq in 64 KiB chunks.
public struct CopyWriter {
    private var buffer: [UInt8] = []
    private let send: ([UInt8]) -> Bool
    private static let chunkSize = 64 * 1024

    init(send: @escaping ([UInt8]) -> Bool) {
        self.send = send
        buffer.reserveCapacity(CopyWriter.chunkSize + 4096)
    }

    /// Appends one row; nil (or a nil `postgresText`) is SQL NULL.
    public mutating func append(_ values: [any PostgresEncodable]) throws {
        let rowStart = buffer.count
        for (index, value) in values.enumerated() {
            if index > 0 { buffer.append(0x09) }
            guard let text = value.postgresText else {
                buffer.append(contentsOf: [0x5c, 0x4e])  // \N
                continue
            }
            for byte in text.utf8 {
                switch byte {
                case 0x5c: buffer.append(contentsOf: [0x5c, 0x5c])
                case 0x0a: buffer.append(contentsOf: [0x5c, 0x6e])
                case 0x0d: buffer.append(contentsOf: [0x5c, 0x72])
                case 0x09: buffer.append(contentsOf: [0x5c, 0x74])
                case 0x00:
                    // The server would refuse the whole COPY; the row is dropped from the buffer
                    // and the caller told which column, not the value.
                    buffer.removeSubrange(rowStart...)
                    throw PostgresError(
                        kind: .usage, sqlState: "22021",
                        message: "COPY column \(index + 1) holds a NUL character, which PostgreSQL text cannot store")
                default: buffer.append(byte)
                }
            }
        }
        buffer.append(0x0a)
        if buffer.count >= CopyWriter.chunkSize, try !flush() {
            throw PostgresError(kind: .connection, message: "the connection refused COPY data")
        }
    }

    /// Sends what is buffered; returns false when libpq refused it.
    mutating func flush() throws -> Bool {
        guard !buffer.isEmpty else { return true }
        defer { buffer.removeAll(keepingCapacity: true) }
        return send(buffer)
    }
}
