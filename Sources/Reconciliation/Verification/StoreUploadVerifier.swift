/// Sends each upload to the verifier of the store whose clients send its kind (`Store.uploadKinds`):
/// the store seam of verification. A kind no store knows is `unknown_kind`; a store the settings
/// leave off (Google Play without `GOOGLE_PLAY_PACKAGE_NAMES`) makes its uploads `store_not_configured`.
public struct StoreUploadVerifier: UploadVerifier {
    /// Each configured store's verifier.
    public let verifiers: [Store: any UploadVerifier]

    /// Creates a router over the stores' verifiers.
    public init(_ verifiers: [Store: any UploadVerifier]) {
        self.verifiers = verifiers
    }

    public func verify(_ upload: Upload, attempt: Int) async throws -> Verdict {
        guard let store = Store(uploadKind: upload.kind) else { return Self.unknownKind(upload.kind) }
        guard let verifier = verifiers[store] else {
            return .invalid(
                code: .storeNotConfigured,
                reason: "a \(store.rawValue) upload, and that store is not configured "
                    + (store == .googlePlay ? "(GOOGLE_PLAY_PACKAGE_NAMES is not set)" : "(RECONCILE_BUNDLE_IDS is not set)"),
                appleStatus: nil)
        }
        return try await verifier.verify(upload, attempt: attempt)
    }

    /// The verdict on an upload of a kind no store knows.
    static func unknownKind(_ kind: UploadKind) -> Verdict {
        let kinds = Store.allCases.flatMap(\.uploadKinds).map(\.rawValue).joined(separator: ", ")
        return .invalid(
            code: .unknownKind, reason: "upload kind \(kind.rawValue.debugDescription) is none of \(kinds)",
            appleStatus: nil)
    }
}
