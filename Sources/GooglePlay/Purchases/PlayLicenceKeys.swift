import Foundation

/// The licence keys of the configured apps, by package name: the setting
/// `GOOGLE_PLAY_LICENSE_KEYS`, a comma list of `PACKAGE=KEY` where KEY is the base64 key from
/// Play Console or `@FILE`, a file holding it.
public struct PlayLicenceKeys: Sendable {
    /// The keys by package name.
    public let keys: [String: PlayLicenceKey]

    /// Keys given directly.
    public init(_ keys: [String: PlayLicenceKey]) {
        self.keys = keys
    }

    /// Parses the setting; `@FILE` is read relative to the working directory. Blank entries
    /// (a trailing comma) are skipped.
    public init(setting: String) throws(PlayLicenceKeyError) {
        var keys: [String: PlayLicenceKey] = [:]
        for (position, entry) in setting.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let entry = entry.trimmingCharacters(in: .whitespacesAndNewlines)
            if entry.isEmpty { continue }
            guard let equals = entry.firstIndex(of: "=") else {
                throw PlayLicenceKeyError(package: "entry \(position + 1)", reason: .notPackageEqualsKey)
            }
            let package = entry[..<equals].trimmingCharacters(in: .whitespaces)
            var key = entry[entry.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard !package.isEmpty, !key.isEmpty, !package.contains(where: \.isWhitespace) else {
                throw PlayLicenceKeyError(package: "entry \(position + 1)", reason: .notPackageEqualsKey)
            }
            guard keys[package] == nil else { throw PlayLicenceKeyError(package: package, reason: .repeatedPackage) }
            if key.hasPrefix("@") {
                let path = String(key.dropFirst())
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw PlayLicenceKeyError(package: package, reason: .unreadableFile(path))
                }
                key = String(decoding: data, as: UTF8.self)
            }
            do {
                keys[package] = try PlayLicenceKey(base64: key)
            } catch {
                throw PlayLicenceKeyError(package: package, reason: error)
            }
        }
        self.keys = keys
    }

    /// The key of `packageName`, if configured.
    public subscript(packageName: String) -> PlayLicenceKey? { keys[packageName] }

    /// The configured packages, sorted.
    public var packageNames: [String] { keys.keys.sorted() }
}
