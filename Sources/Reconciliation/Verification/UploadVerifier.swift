/// Verifies uploads with Apple. Throws only for failures that must stop the run (a wrong
/// shared secret, `21004`); everything about one upload is a `Verdict`.
public protocol UploadVerifier: Sendable {
    /// Verifies one upload; `attempt` is 1 for the first try across runs.
    func verify(_ upload: Upload, attempt: Int) async throws -> Verdict
}
