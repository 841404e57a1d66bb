import Foundation
import SwiftASN1
import X509

/// The root certificates a verifier accepts as anchors.
///
/// Defaults to the roots bundled with the project (Apple Root CA - G3 for StoreKit 2 JWS, Apple
/// Inc. Root for app receipts); `APPLE_ROOT_CERTIFICATES` or the simulator's CA replace them.
public struct TrustedRoots: Sendable, Hashable {
    /// The anchors.
    public var certificates: [Certificate]

    /// Trusts exactly these certificates.
    public init(_ certificates: [Certificate]) {
        self.certificates = certificates
    }

    /// Reads DER (one certificate) or PEM (one or more `CERTIFICATE` blocks).
    public init(derOrPEM bytes: [UInt8]) throws {
        self.certificates = try Self.certificates(in: bytes)
    }

    /// Reads several files' contents, each DER or PEM.
    public init(derOrPEM files: [[UInt8]]) throws {
        self.certificates = try files.flatMap(Self.certificates(in:))
    }

    /// Apple Root CA - G3 and Apple Inc. Root, as shipped with the project.
    public static let apple: TrustedRoots = TrustedRoots(
        AppStore.bundledRootCertificates.compactMap { try? Certificate(derEncoded: Array($0.der)) }
    )

    private static func certificates(in bytes: [UInt8]) throws -> [Certificate] {
        if bytes.first == 0x30 {
            return [try Certificate(derEncoded: bytes)]
        }
        guard let text = String(bytes: bytes, encoding: .utf8) else {
            throw TrustedRootsError.unreadable("neither DER nor PEM text")
        }
        let documents = try PEMDocument.parseMultiple(pemString: text)
        let certificates = try documents.filter { $0.discriminator == "CERTIFICATE" }.map {
            try Certificate(derEncoded: $0.derBytes)
        }
        guard !certificates.isEmpty else { throw TrustedRootsError.unreadable("no CERTIFICATE in PEM") }
        return certificates
    }
}

/// A root certificate file could not be read.
public enum TrustedRootsError: Error, Hashable, Sendable {
    /// The bytes are neither a DER certificate nor PEM with a certificate.
    case unreadable(String)
}
