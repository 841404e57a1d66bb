import Foundation
import X509

/// The real test vectors of `../shared/vectors`, copied into the test bundle (provenance and
/// licences in `Vectors/MANIFEST.md`).
enum Vectors {
    static func data(_ path: String) throws -> Data {
        guard let directory = Bundle.module.url(forResource: "Vectors", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try Data(contentsOf: directory.appendingPathComponent(path))
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try data(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func certificate(_ name: String) throws -> Certificate {
        try Certificate(derEncoded: Array(data("certs/\(name)")))
    }

    static func date(_ rfc3339: String) -> Date {
        // Test fixtures only use the UTC `Z` form.
        let formatter = ISO8601DateFormatter()
        return formatter.date(from: rfc3339)!
    }
}
