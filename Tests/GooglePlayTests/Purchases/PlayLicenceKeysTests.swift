import Foundation
import GooglePlay
import Testing

@Suite struct PlayLicenceKeysTests {
    let key = PlayTestKeys.rsa.publicKey.derRepresentation.base64EncodedString()

    @Test func theSettingReadsKeysDirectAndFromFiles() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("licence-\(UUID()).txt")
        // Play Console's text copied with its line breaks.
        try Data((key.prefix(64) + "\n" + key.dropFirst(64) + "\n").utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let keys = try PlayLicenceKeys(setting: " com.example.a=\(key), com.example.b=@\(file.path),")
        #expect(keys.packageNames == ["com.example.a", "com.example.b"])
        #expect(keys["com.example.b"]?.publicKey.derRepresentation == PlayTestKeys.rsa.publicKey.derRepresentation)
        #expect(keys["com.example.c"] == nil)
    }

    @Test func badEntriesNameTheirPackageAndNoKey() {
        let cases: [(String, PlayLicenceKeyError)] = [
            ("com.example.a", .init(package: "entry 1", reason: .notPackageEqualsKey)),
            ("com.example.a=\(key),=\(key)", .init(package: "entry 2", reason: .notPackageEqualsKey)),
            ("com.example.a=\(key),com.example.a=\(key)", .init(package: "com.example.a", reason: .repeatedPackage)),
            ("com.example.a=@/nonexistent/key", .init(package: "com.example.a", reason: .unreadableFile("/nonexistent/key"))),
            ("com.example.a=abc!", .init(package: "com.example.a", reason: .notBase64)),
            ("com.example.a=YWJjZA==", .init(package: "com.example.a", reason: .notRSAPublicKey)),
        ]
        for (setting, error) in cases {
            #expect(throws: error) { try PlayLicenceKeys(setting: setting) }
            #expect(!error.description.contains(key))
        }
    }
}
