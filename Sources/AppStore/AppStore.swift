import Foundation

/// Apple's side of reconciliation: receipts, signed transactions, verifyReceipt and the
/// App Store Server API. This module knows nothing of the database.
public enum AppStore {
    /// Apple's trusted roots bundled with the project, as DER, by file name.
    public static var bundledRootCertificates: [(name: String, der: Data)] {
        EmbeddedFiles.paths(under: "roots").compactMap { path in
            EmbeddedFiles.data(path).map { (String(path.dropFirst("roots/".count)), $0) }
        }
    }
}
