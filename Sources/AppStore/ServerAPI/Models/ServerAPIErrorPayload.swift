/// The JSON body of a Server API error (`{"errorCode": 4040010, "errorMessage": "…"}`).
public struct ServerAPIErrorPayload: Codable, Hashable, Sendable {
    /// Apple's error code, e.g. `4040010` transaction id not found.
    public var errorCode: Int?
    /// Apple's explanation.
    public var errorMessage: String?

    /// Creates a body.
    public init(errorCode: Int?, errorMessage: String?) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}
