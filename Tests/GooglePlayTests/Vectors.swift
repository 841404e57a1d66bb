import Foundation

/// The real test vectors of `../shared/vectors/play`, copied into the test bundle (provenance and
/// licence in `Vectors/MANIFEST.md`).
enum Vectors {
    static func data(_ path: String) throws -> Data {
        guard let directory = Bundle.module.url(forResource: "Vectors", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try Data(contentsOf: directory.appendingPathComponent(path))
    }
}
