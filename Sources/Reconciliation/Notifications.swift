import AppStore
import Foundation
import Postgres

/// What verifying one stored App Store Server Notification established.
public enum NotificationVerdict: Sendable, Equatable {
    /// Signed by Apple and for this app: its UUID, type, and the transaction it carries (if any).
    case verified(uuid: UUID, type: String, subtype: String?, signedDate: Date?, transaction: AppleTransactionRecord?)
    /// Not acceptable, for good.
    case invalid(reason: String)
}

extension AppleUploadVerifier {
    /// Verifies a stored `{"signedPayload": …}` body (or a bare signed payload) with its nested
    /// signed transaction.
    public func verifyNotification(_ body: String) async -> NotificationVerdict {
        switch await jwsVerifier.verifyNotificationBody(body) {
        case .invalid(let failure):
            return .invalid(reason: failure.description)
        case .valid(let notification):
            guard let text = notification.notificationUUID, let uuid = UUID(uuidString: text) else {
                return .invalid(reason: "the notification has no notificationUUID")
            }
            let transaction = notification.transaction.flatMap { AppleTransactionRecord($0, source: .notification) }
            if let field = transaction?.fieldHoldingNUL {
                return .invalid(
                    reason: "Apple's data holds a NUL character in \(field); PostgreSQL text cannot store it")
            }
            return .verified(
                uuid: uuid, type: notification.payload.notificationType?.rawValue ?? "UNKNOWN",
                subtype: notification.payload.subtype?.rawValue, signedDate: notification.payload.signedDate,
                transaction: transaction)
        }
    }
}

/// Applies `reconcile.notifications` (SPEC section 3): each stored body is verified once;
/// `REFUND`/`REVOKE` carry a revoked transaction, `REFUND_REVERSED` one whose revocation is gone,
/// `ONE_TIME_CHARGE` and the subscription types new transactions. Apple resends a notification
/// with the same `notificationUUID`: only the first is applied.
public struct NotificationApplier: Sendable {
    /// Verifies a body.
    public let verify: @Sendable (String) async -> NotificationVerdict

    /// Creates an applier around a verification function.
    public init(verify: @escaping @Sendable (String) async -> NotificationVerdict) {
        self.verify = verify
    }

    /// Applies every stored notification not yet seen, then those Get Notification History brought
    /// (`reconcile notifications sync`); returns how many were applied.
    @discardableResult
    public func applyPending(runID: Int64, on connection: Connection, batchSize: Int = 100) async throws -> Int {
        try await applyEndpoint(runID: runID, on: connection, batchSize: batchSize)
            + applyHistory(runID: runID, on: connection, batchSize: batchSize)
    }

    /// The largest stored notification body read: Apple's are a few tens of KB (a signed payload
    /// with its nested signed transaction and their certificate chains); SPEC section 16's
    /// receiver refuses bodies over 256 KB. The app's endpoint stores bodies unverified, so anyone
    /// can fill the table: larger ones are made `invalid` (`payload_too_large`) from their size
    /// alone, in SQL, and never fetched.
    public static let maximumBodyBytes = 256 << 10
    /// The most body bytes one batch fetches (at least one body): memory stays flat whatever the
    /// table holds.
    public static let maximumBatchBytes = 8 << 20

    /// Notifications the app's endpoint stored in `reconcile.notifications`.
    func applyEndpoint(runID: Int64, on connection: Connection, batchSize: Int) async throws -> Int {
        // octet_length reads a TOASTed value's size from its header, without detoasting it.
        try connection.execute(
            """
            INSERT INTO reconcile.notification_verifications (notification_id, state, error, run_id)
            SELECT n.id, 'invalid',
                   format('payload_too_large: the body is %s bytes, over the %s-byte limit for a notification: '
                          'rejected unread', octet_length(n.signed_payload), $2::integer), $1
              FROM reconcile.notifications n
             WHERE octet_length(n.signed_payload) > $2
               AND NOT EXISTS (SELECT 1 FROM reconcile.notification_verifications v
                                WHERE v.notification_id = n.id AND v.state <> 'retry')
            ON CONFLICT (notification_id) DO UPDATE SET state = 'invalid', error = EXCLUDED.error,
                run_id = EXCLUDED.run_id, updated_at = now()
            """, [runID, Self.maximumBodyBytes])
        var applied = 0
        var after: Int64 = 0
        while true {
            try Task.checkCancellation()
            // Up to `batchSize` bodies and `maximumBatchBytes` of them; sizes are read before any
            // body is, and a body too large that arrived meanwhile waits for the next run.
            let batch = try connection.query(
                """
                WITH due AS (
                    SELECT n.id, sum(n.bytes) OVER (ORDER BY n.id) AS running_bytes,
                           row_number() OVER (ORDER BY n.id) AS position
                      FROM (SELECT n.id, octet_length(n.signed_payload) AS bytes FROM reconcile.notifications n
                             WHERE n.id > $1 AND octet_length(n.signed_payload) <= $4
                               AND NOT EXISTS (SELECT 1 FROM reconcile.notification_verifications v
                                                WHERE v.notification_id = n.id AND v.state <> 'retry')
                             ORDER BY n.id LIMIT $2) n
                )
                SELECT n.id, n.signed_payload FROM due d JOIN reconcile.notifications n ON n.id = d.id
                 WHERE d.position = 1 OR d.running_bytes <= $3
                 ORDER BY n.id
                """, [after, batchSize, Self.maximumBatchBytes, Self.maximumBodyBytes]
            ).map { (try $0.decode(Int64.self, at: 0), try $0.decode(String.self, at: 1)) }
            guard let last = batch.last else { return applied }
            after = last.0
            var verdicts: [(Int64, NotificationVerdict)] = []
            for (id, body) in batch { verdicts.append((id, await verify(body))) }
            applied += try connection.transaction { try record(verdicts, runID: runID, on: connection) }
        }
    }

    private func record(_ verdicts: [(Int64, NotificationVerdict)], runID: Int64, on connection: Connection) throws -> Int {
        var applied = 0
        var records: [(AppleTransactionRecord, Carrier?)] = []
        for (id, verdict) in verdicts {
            switch verdict {
            case .invalid(let reason):
                try connection.execute(
                    """
                    INSERT INTO reconcile.notification_verifications (notification_id, state, error, run_id)
                    VALUES ($1, 'invalid', $2, $3)
                    ON CONFLICT (notification_id) DO UPDATE SET state = 'invalid', error = EXCLUDED.error,
                        run_id = EXCLUDED.run_id, updated_at = now()
                    """, [id, reason.escapingNUL, runID])
            case .verified(let uuid, let type, let subtype, let signedDate, let transaction):
                // One notificationUUID is applied once, whichever source brought it first.
                let duplicate = try !NotificationLedger.claim(
                    uuid: uuid, type: type, subtype: subtype, signedDate: signedDate, transaction: transaction,
                    source: "endpoint", sourceID: id, on: connection)
                try connection.execute(
                    """
                    INSERT INTO reconcile.notification_verifications
                        (notification_id, state, notification_uuid, notification_type, subtype, transaction_id,
                         signed_date, run_id)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                    ON CONFLICT (notification_id) DO UPDATE SET state = EXCLUDED.state,
                        notification_uuid = EXCLUDED.notification_uuid, notification_type = EXCLUDED.notification_type,
                        subtype = EXCLUDED.subtype, transaction_id = EXCLUDED.transaction_id,
                        signed_date = EXCLUDED.signed_date, run_id = EXCLUDED.run_id, error = NULL, updated_at = now()
                    """,
                    [id, duplicate ? "duplicate" : "applied", uuid, type, subtype, transaction?.transactionID,
                     signedDate, runID])
                if !duplicate {
                    applied += 1
                    if let transaction { records.append((transaction, nil)) }
                }
            }
        }
        try TransactionStore.upsert(records, runID: runID, on: connection)
        return applied
    }

    /// Notifications `reconcile notifications sync` accepted from Get Notification History: their
    /// transactions enter the white table in a run, so that the diff sees what changed.
    func applyHistory(runID: Int64, on connection: Connection, batchSize: Int) async throws -> Int {
        var applied = 0
        while true {
            try Task.checkCancellation()
            let batch = try connection.query(
                """
                SELECT id, signed_payload FROM reconcile.notification_history
                 WHERE state = 'accepted' ORDER BY id LIMIT $1
                """, [batchSize]
            ).map { (try $0.decode(Int64.self, at: 0), try $0.decode(String.self, at: 1)) }
            guard !batch.isEmpty else { return applied }
            var records: [(AppleTransactionRecord, Carrier?)] = []
            for (_, payload) in batch {
                if case .verified(_, _, _, _, let transaction?) = await verify(payload) {
                    records.append((transaction, nil))
                }
            }
            try connection.transaction {
                try TransactionStore.upsert(records, runID: runID, on: connection)
                try connection.execute(
                    """
                    UPDATE reconcile.notification_history SET state = 'applied', run_id = $2
                     WHERE id = ANY($1::bigint[]) AND state = 'accepted'
                    """, [batch.map(\.0), runID])
            }
            applied += batch.count
        }
    }
}

/// `reconcile.notifications_seen`: every notificationUUID once, whatever brought it (SPEC section
/// 14), and what a first-seen refund decision means for an answer to a refund request.
enum NotificationLedger {
    /// Records a verified notification; true when this copy is the first of its UUID (or is the
    /// copy recorded before), false for a duplicate.
    static func claim(
        uuid: UUID, type: String, subtype: String?, signedDate: Date?, transaction: AppleTransactionRecord?,
        source: String, sourceID: Int64, on connection: Connection
    ) throws -> Bool {
        let first = try connection.query(
            """
            WITH inserted AS (
                INSERT INTO reconcile.notifications_seen
                    (notification_uuid, source, source_id, notification_type, subtype, transaction_id, environment,
                     app_account_token, signed_date, product_id)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                ON CONFLICT (notification_uuid) DO NOTHING
                RETURNING 1
            )
            SELECT EXISTS (SELECT 1 FROM inserted)
                OR EXISTS (SELECT 1 FROM reconcile.notifications_seen
                            WHERE notification_uuid = $1 AND source = $2 AND source_id = $3)
            """,
            [uuid, source, sourceID, type, subtype, transaction?.transactionID, transaction?.environment.rawValue,
             transaction?.appAccountToken, signedDate, transaction?.productID])[0].decode(Bool.self, at: 0)
        guard first, let transaction else { return first }
        // Apple's decision on a refund request closes the answer given to it (a later request is a
        // new one).
        let outcome: String? =
            switch type {
            case "REFUND": "refunded"
            case "REFUND_DECLINED": "declined"
            default: nil
            }
        if let outcome {
            try connection.execute(
                """
                UPDATE reconcile.consumption_answers
                   SET outcome = $2, decided_at = $3, updated_at = now()
                 WHERE transaction_id = $1 AND outcome IS NULL AND requested_at <= coalesce($3, now())
                """, [transaction.transactionID, outcome, signedDate])
        }
        return first
    }
}
