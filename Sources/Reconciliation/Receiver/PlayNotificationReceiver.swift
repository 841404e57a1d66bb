import Crypto
import Foundation
import GooglePlay
import Postgres

/// What `reconcile notifications receive` does with one Cloud Pub/Sub push of a Google Play
/// real-time developer notification (SPEC section 18, `--play-path`): the push's `?token=` checked
/// against `RECONCILE_PLAY_PUSH_TOKEN` in constant time, then the body stored exactly as posted in
/// `reconcile.play_notifications`, once per `messageId`, and Pub/Sub answered 204 after that commit.
///
/// Nothing a notification says is trusted for a purchase's state: it only names a purchase token,
/// which ``PlayNotificationWorker`` asks the Developer API about. Its data is decoded here only to
/// store what it names; data that does not decode (not base64, not JSON: seen in the wild) is
/// stored raw and answered 204 all the same, since Pub/Sub redelivers a refused push for days
/// (https://cloud.google.com/pubsub/docs/push: any status but 102, 200, 201, 202 or 204 is a nack).
public struct PlayNotificationReceiver: Sendable {
    /// Pub/Sub's push bodies for RTDN are well under a kilobyte; the same limit as Apple's path.
    public static let maximumBodyBytes = NotificationReceiver.maximumBodyBytes

    /// SHA-256 of `RECONCILE_PLAY_PUSH_TOKEN`; nil without one: every push is refused (403).
    private let tokenDigest: [UInt8]?

    /// A receiver accepting pushes whose `?token=` is `pushToken` (none: it accepts nothing).
    public init(pushToken: Secret?) {
        tokenDigest = pushToken.map { Array(SHA256.hash(data: Data($0.value.utf8))) }
    }

    /// Whether the receiver has a push token at all.
    public var acceptsPushes: Bool { tokenDigest != nil }

    /// Whether a push's `?token=` is the configured one. Both are hashed first, then compared in
    /// time that depends on neither (digests of a fixed length, every byte compared): a timing side
    /// channel reveals nothing of how much of a guess is right, nor the token's length.
    public func authorizes(token: String?) -> Bool {
        guard let expected = tokenDigest, let token else { return false }
        let given = Array(SHA256.hash(data: Data(token.utf8)))
        var difference: UInt8 = 0
        for (a, b) in zip(expected, given) { difference |= a ^ b }
        return difference == 0
    }

    /// A push's body as it is stored.
    public struct Push: Sendable, Equatable {
        /// The body exactly as posted.
        public var body: String
        public var messageID: String
        public var subscription: String?
        public var publishTime: Date?
        /// The decoded data, when it is base64 UTF-8 text.
        public var data: String?
        /// Why the data is not a developer notification; nil when it is one.
        public var dataError: DeveloperNotificationError?
        /// Why the body is not a Pub/Sub envelope with a message id (nil when it is one): stored
        /// all the same, under ``messageID`` `body-sha256:<hex of the body's SHA-256>`, so that the
        /// same garbage posted again is stored once.
        public var envelopeError: String?

        /// Why what was posted is not a developer notification: the envelope's, else its data's.
        public var problem: String? { envelopeError ?? dataError?.code }
        /// `one_time`, `subscription`, `voided`, `test`, `unknown`, `undecodable`.
        public var kind: String
        public var notificationType: Int?
        public var packageName: String?
        public var purchaseToken: String?
        public var orderID: String?
        public var eventTime: Date?

        /// Whether the worker has anything to ask Google about it.
        public var needsAsking: Bool {
            ["one_time", "subscription", "voided"].contains(kind) && purchaseToken?.isEmpty == false
                && packageName?.isEmpty == false
        }
    }

    /// The push read. Nothing is refused once the token is right (SPEC section 18: garbage is
    /// stored and answered 204, since Pub/Sub redelivers a refusal for days): data that does not
    /// decode is stored raw, and a body that is not an envelope with a message id (not JSON, not
    /// UTF-8, holding NUL) is stored too, its text with any NUL or byte that is not UTF-8 replaced
    /// by U+FFFD, under the SHA-256 of its bytes.
    public func read(_ bytes: some Collection<UInt8>) -> Push {
        func garbage(_ problem: String) -> Push {
            let digest = SHA256.hash(data: Array(bytes)).map { String(format: "%02x", $0) }.joined()
            let text = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\u{0}", with: "\u{FFFD}")
            var push = Push(body: text, messageID: "body-sha256:" + digest, kind: "undecodable")
            push.envelopeError = problem
            return push
        }
        guard let body = String(validating: bytes, as: UTF8.self) else { return garbage("body_not_utf8") }
        guard !body.containsNUL else { return garbage("body_holds_nul") }
        let envelope: PubSubPushEnvelope
        do {
            envelope = try PubSubPushEnvelope(body: body.utf8)
        } catch {
            return garbage(error.code)
        }
        guard !envelope.messageID.containsNUL else { return garbage("message_id_holds_nul") }
        var push = Push(
            body: body, messageID: envelope.messageID, subscription: envelope.subscription?.withoutNUL,
            publishTime: envelope.publishDate, kind: "undecodable")
        if let bytes = envelope.decodedData, let text = String(data: bytes, encoding: .utf8), !text.containsNUL {
            push.data = text
        }
        do {
            let notification = try envelope.notification()
            push.packageName = notification.packageName?.withoutNUL
            push.eventTime = notification.eventTime
            push.purchaseToken = notification.purchaseToken?.withoutNUL
            switch notification.kind {
            case .oneTimeProduct(let one):
                push.kind = "one_time"
                push.notificationType = one.notificationType
            case .subscription(let subscription):
                push.kind = "subscription"
                push.notificationType = subscription.notificationType
            case .voidedPurchase(let voided):
                push.kind = "voided"
                push.orderID = voided.orderId?.withoutNUL
                // productType 1 subscription, 2 one-time; kept as the type for the worker.
                push.notificationType = voided.productType
            case .test:
                push.kind = "test"
            case .unknown:
                push.kind = "unknown"
            }
        } catch {
            push.dataError = error
        }
        return push
    }

    /// What became of a push.
    public enum Stored: Sendable, Equatable {
        /// Stored now, as row `id`.
        case new(id: Int64)
        /// Pub/Sub delivered this messageId before: nothing stored.
        case duplicate
    }

    /// Stores a push once per messageId, in one committed statement.
    public func store(_ push: Push, on connection: Connection) throws -> Stored {
        let rows = try connection.queryPrepared(
            PlayReceiverSQL.storeNotification,
            [
                "message_id": push.messageID, "subscription": push.subscription, "publish_time": push.publishTime,
                "body": push.body, "data": push.data, "data_error": push.problem, "kind": push.kind,
                "notification_type": push.notificationType, "package_name": push.packageName,
                "purchase_token": push.purchaseToken, "order_id": push.orderID, "event_time": push.eventTime,
                "state": push.needsAsking ? "pending" : "stored",
            ])
        guard let row = rows.first, try row.decode(Bool.self, "stored") else { return .duplicate }
        return .new(id: try row.decode(Int64.self, "id"))
    }
}

/// The Play notifications' statements, in `sql/receiver/play_*.sql`.
enum PlayReceiverSQL {
    static let storeNotification: SQLFile = "receiver/play_store_notification.sql"
    static let claim: SQLFile = "receiver/play_claim.sql"
    static let finish: SQLFile = "receiver/play_finish.sql"
    static let postpone: SQLFile = "receiver/play_postpone.sql"
    static let pending: SQLFile = "receiver/play_pending.sql"
    static let metrics: SQLFile = "receiver/play_metrics.sql"
    static let whiteRow: SQLFile = "receiver/play_white_row.sql"
}

extension String {
    /// The text, or nil when it holds a NUL character (PostgreSQL text cannot store one).
    fileprivate var withoutNUL: String? { containsNUL ? nil : self }
}
