/// `GOOGLE_PLAY_LICENSE_KEYS` could not be used. Short, and never quoting key material.
public struct PlayLicenceKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with one key.
    public enum Reason: Error, Hashable, Sendable, CustomStringConvertible {
        /// The text is not base64.
        case notBase64
        /// The bytes are not an X.509 SubjectPublicKeyInfo of an RSA key.
        case notRSAPublicKey
        /// The key has fewer than ``PlayLicenceKey/minimumBits`` bits.
        case tooSmall(bits: Int)
        /// `@FILE` names a file that cannot be read.
        case unreadableFile(String)
        /// The entry is not `PACKAGE=KEY`.
        case notPackageEqualsKey
        /// The package is given twice.
        case repeatedPackage

        public var description: String {
            switch self {
            case .notBase64: "the key is not base64"
            case .notRSAPublicKey: "the key is not an RSA public key (base64 X.509 SubjectPublicKeyInfo)"
            case .tooSmall(let bits): "the key has \(bits) bits, fewer than \(PlayLicenceKey.minimumBits)"
            case .unreadableFile(let path): "cannot read \(path)"
            case .notPackageEqualsKey: "not PACKAGE=KEY or PACKAGE=@FILE"
            case .repeatedPackage: "the package is given twice"
            }
        }
    }

    /// The package the entry names, or `entry N` when it names none.
    public var package: String
    public var reason: Reason

    public init(package: String, reason: Reason) {
        self.package = package
        self.reason = reason
    }

    /// `GOOGLE_PLAY_LICENSE_KEYS: <package>: <reason>`.
    public var description: String { "GOOGLE_PLAY_LICENSE_KEYS: \(package): \(reason)" }
}
