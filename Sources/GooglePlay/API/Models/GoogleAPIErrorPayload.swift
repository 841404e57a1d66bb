/// The body of a Google API error: `{"error": {"code", "message", "status", "errors": [{"reason", …}]}}`.
/// The reason (`permissionDenied`, `concurrentUpdate`, `invalidPurchaseState`, …) is what the
/// client classifies on; the message is kept short for logs.
struct GoogleAPIErrorPayload: Decodable, Sendable {
    struct Body: Decodable, Sendable {
        struct Detail: Decodable, Sendable {
            var reason: String?
            var domain: String?
        }
        var code: Int?
        var message: String?
        var status: String?
        var errors: [Detail]?
    }

    var error: Body?

    /// The first reason Google gives, else its status (`PERMISSION_DENIED`, …).
    var reason: String? { error?.errors?.lazy.compactMap(\.reason).first ?? error?.status }
}
