import Foundation

/// go-iap's `TestVerifySignature` literals (Vectors/play, provenance in Vectors/MANIFEST.md).
struct GoIAPVectors: Decodable {
    struct Case: Decodable, CustomStringConvertible {
        var name: String
        var pubkey_b64: String
        var signature_b64: String
        var source_expected_valid: Bool
        var description: String { name }
    }

    /// The signed `purchaseData` (package `my.package`).
    var signed_data: String
    var cases: [Case]

    static func load() throws -> GoIAPVectors {
        try JSONDecoder().decode(GoIAPVectors.self, from: Vectors.data("play/goiap-verify-signature-cases.json"))
    }

    func named(_ name: String) throws -> Case {
        guard let found = cases.first(where: { $0.name == name }) else { throw CocoaError(.fileReadCorruptFile) }
        return found
    }

    /// A payload as the Android client sends it.
    static func payload(purchaseData: String, signature: String) -> String {
        let object = ["purchaseData": purchaseData, "signature": signature]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
