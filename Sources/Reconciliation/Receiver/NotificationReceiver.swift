import AppStore
import Foundation
import Postgres

/// What `reconcile notifications receive` does with one body Apple posts (SPEC section 16):
/// verified with SPEC section 3's JWS rules (chain, OIDs, bundle id accepted, environment), then
/// stored exactly as posted in `reconcile.notifications`, once per `notificationUUID`, with its
/// forwarding queued in the same statement. Apple gets its 200 only after that commit; what the
/// notification means is applied later by ``ReceiverWorker``, so that Apple's answer never waits
/// on the ledger, the diff or the app's endpoint.
public struct NotificationReceiver: Sendable {
    /// Apple's bodies are a few tens of KB; anything larger is refused before it is read (413).
    public static let maximumBodyBytes = NotificationApplier.maximumBodyBytes

    /// A body that verified: what to store.
    public struct Verified: Sendable, Equatable {
        /// The body exactly as posted.
        public var body: String
        public var uuid: UUID
        /// `notificationType` as Apple sent it; types the job does not know are stored all the same.
        public var type: NotificationType
        /// The whole verdict, for the worker (``ListenerVerdicts``).
        var verdict: NotificationVerdict
    }

    /// What became of a verified body.
    public enum Stored: Sendable, Equatable {
        /// Stored now, as row `id`.
        case new(id: Int64)
        /// Apple sent this notificationUUID before (a retry): nothing stored.
        case duplicate
    }

    let verify: @Sendable (String) async -> NotificationVerdict
    /// Whether stored notifications are queued for the app's endpoint.
    public let forwarding: Bool
    /// Where the verdicts of the rows stored are left for the worker of this process.
    let verdicts: ListenerVerdicts?

    /// A receiver verifying with `verify` (``AppleUploadVerifier/verifyNotification(_:)``), leaving
    /// what it stored verified in `verdicts` for the worker's applier (given the same).
    public init(
        forwarding: Bool, verdicts: ListenerVerdicts? = nil,
        verify: @escaping @Sendable (String) async -> NotificationVerdict
    ) {
        self.forwarding = forwarding
        self.verdicts = verdicts
        self.verify = verify
    }

    /// The body verified, or why it is refused. A refusal is never trusted and never stored.
    /// `RESCIND_CONSENT` (which carries `appData` and no `data`), `EXTERNAL_PURCHASE_TOKEN` (which
    /// carries `externalPurchaseToken`, its environment read from the token's id as Apple's
    /// libraries do) and types the job does not know verify like any other: their signature,
    /// chain, bundle id and environment are checked all the same.
    public func verify(_ bytes: some Collection<UInt8>) async -> Result<Verified, Refusal> {
        guard let body = String(validating: bytes, as: UTF8.self) else {
            return .failure(Refusal("the body is not UTF-8 text"))
        }
        guard !body.containsNUL else { return .failure(Refusal("the body holds a NUL character")) }
        // The exact body is stored and forwarded: it must mean the same to every reader.
        if let finding = RepeatedMemberCheck.check(body.utf8) { return .failure(Refusal("\(finding)")) }
        let trimmed = body.trimmingWhitespacesAndNewlines()
        // Apple posts `{"signedPayload": "…"}`; the applier also takes a bare JWS, Apple never sends one.
        guard trimmed.hasPrefix("{") else {
            return .failure(Refusal("the body is not Apple's JSON object {\"signedPayload\": …}"))
        }
        let verdict = await verify(body)
        switch verdict {
        case .invalid(let reason):
            return .failure(Refusal(reason))
        case .verified(let uuid, let type, _, _, _):
            return .success(Verified(body: body, uuid: uuid, type: type, verdict: verdict))
        }
    }

    /// Stores a verified body once per notificationUUID, in one committed statement.
    public func store(_ verified: Verified, on connection: Connection) throws -> Stored {
        let rows = try connection.queryPrepared(
            ReceiverSQL.storeNotification,
            ["body": verified.body, "notification_uuid": verified.uuid, "forward": forwarding])
        Failpoint.pass("receiver.stored")
        guard let row = rows.first, try row.decode(Bool.self, "stored") else { return .duplicate }
        let id = try row.decode(Int64.self, "id")
        verdicts?.record(id: id, body: verified.body, verdict: verified.verdict)
        return .new(id: id)
    }

    /// Why a posted body was refused, for the log (never the body itself).
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
