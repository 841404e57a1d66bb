import Foundation

/// One row of the uploads relation, as the verifier needs it.
public struct Upload: Sendable, Equatable {
    /// `id`.
    public var id: Int64
    /// `user_id`: the account logged in when the client uploaded.
    public var userID: String
    /// `kind`.
    public var kind: UploadKind
    /// `payload`, exactly as uploaded.
    public var payload: String
    /// `application_username`.
    public var applicationUsername: String?
    /// `app_account_token`.
    public var appAccountToken: UUID?
    /// `claimed_transaction_id`.
    public var claimedTransactionID: String?
    /// `uploaded_at`.
    public var uploadedAt: Date

    /// Creates an upload.
    public init(
        id: Int64, userID: String, kind: UploadKind, payload: String, applicationUsername: String? = nil,
        appAccountToken: UUID? = nil, claimedTransactionID: String? = nil, uploadedAt: Date = Date()
    ) {
        self.id = id
        self.userID = userID
        self.kind = kind
        self.payload = payload
        self.applicationUsername = applicationUsername
        self.appAccountToken = appAccountToken
        self.claimedTransactionID = claimedTransactionID
        self.uploadedAt = uploadedAt
    }
}
