import Foundation
import Postgres

/// Verification work in `reconcile.upload_verifications`: enqueued per run, claimed in batches
/// with `FOR UPDATE SKIP LOCKED` (so several workers share a window and each upload is verified
/// once), and recorded together with the transactions it confirmed in one transaction per batch.
public struct VerificationQueue: Sendable {
    /// The uploads relation (quoted).
    public let uploads: String
    /// A claim older than this is taken to belong to a dead worker.
    public let lease: TimeInterval
    /// Attempts before a persistent `21002` makes an upload invalid.
    public let maxAttempts: Int

    /// The largest payload verified, in bytes: above any receipt the parser reads (4 MiB once
    /// base64-decoded, about 5.6 MB of text) and any JWS it accepts (1 MiB). A larger upload is
    /// made `invalid` (`payload_too_large`) from its size alone, in SQL: it is never fetched, so
    /// a client that uploads a gigabyte costs no memory.
    public static let maximumPayloadBytes = 6 << 20

    /// The most payload bytes one batch holds in memory: a batch stops before the upload that
    /// would take it past this (but always takes one), so a run of large receipts keeps to the
    /// memory bound of SPEC section 12 however many it claims at a time.
    public static let maximumBatchBytes = 16 << 20

    /// Creates a queue over the uploads relation.
    public init(uploads: String, lease: TimeInterval = 300, maxAttempts: Int) {
        self.uploads = uploads
        self.lease = lease
        self.maxAttempts = maxAttempts
    }

    /// Marks the run's work: every upload stored since the last run took the arrivals (whatever its
    /// `uploaded_at`), every upload of the window not yet verified, and every earlier upload still
    /// pending or retrying, due at once (SPEC section 3: the next run tries it again first;
    /// backoff waits are for within a run); those over ``maximumPayloadBytes`` are made `invalid`
    /// at once. Returns how many uploads the run has to verify.
    @discardableResult
    public func enqueue(runID: Int64, since: Date?, until: Date, on connection: Connection) throws -> Int {
        // SPEC section 5: an upload is read by the first run after it is stored, whatever its
        // uploaded_at (an app that queues uploads and stores them with the client's time, a
        // replica lagging past the window's overlap). The triggers of migration 0014 note each
        // upload as it is stored; one statement takes the notes this snapshot shows committed and
        // enqueues their uploads, so a note committed meanwhile stays for the next run. An
        // operator's uploads relation without the triggers is read by uploaded_at alone.
        try connection.execute(
            """
            WITH arrived AS (DELETE FROM reconcile.upload_arrivals RETURNING upload_id)
            INSERT INTO reconcile.upload_verifications (upload_id, state, first_run_id, last_run_id)
            SELECT DISTINCT a.upload_id, 'pending', $1::bigint, $1::bigint FROM arrived a
             WHERE EXISTS (SELECT 1 FROM \(uploads) u WHERE u.id = a.upload_id)
            ON CONFLICT (upload_id) DO NOTHING
            """, [runID])
        // New uploads only, by an anti-join: over a whole history of verified uploads it costs a
        // fifth of an upsert, which probes the primary key once per upload. The window's
        // uploads still pending or retrying are made due by the next statement.
        try connection.execute(
            """
            INSERT INTO reconcile.upload_verifications (upload_id, state, first_run_id, last_run_id)
            SELECT u.id, 'pending', $1, $1 FROM \(uploads) u
             WHERE u.uploaded_at >= $2 AND u.uploaded_at < $3
               AND NOT EXISTS (SELECT 1 FROM reconcile.upload_verifications v WHERE v.upload_id = u.id)
            ON CONFLICT (upload_id) DO NOTHING
            """, [runID, since ?? Date.distantPast, until])
        // Every upload still pending or retrying, in the window or before it, is due now. Claims
        // left by earlier runs belong to processes that are gone (this run holds the run lock,
        // and workers only join the run in progress): they are released rather than waited out.
        try connection.execute(
            """
            UPDATE reconcile.upload_verifications
               SET last_run_id = $1, claimed_by = NULL, claimed_at = NULL, next_attempt_at = NULL, updated_at = now()
             WHERE state IN ('pending', 'retry') AND last_run_id IS DISTINCT FROM $1
            """, [runID])
        // octet_length reads a TOASTed value's size from its header, without detoasting it.
        try connection.execute(
            """
            UPDATE reconcile.upload_verifications v
               SET state = 'invalid', error_code = 'payload_too_large', apple_status = NULL,
                   last_error = format('payload is %s bytes, over the %s-byte limit for an upload: rejected unread',
                                       octet_length(u.payload), $2::integer),
                   attempts = v.attempts + 1, next_attempt_at = NULL, updated_at = now()
              FROM \(uploads) u
             WHERE u.id = v.upload_id AND v.last_run_id = $1 AND v.state IN ('pending', 'retry')
               AND octet_length(u.payload) > $2
            """, [runID, Self.maximumPayloadBytes])
        return try connection.query(
            "SELECT count(*) FROM reconcile.upload_verifications WHERE last_run_id = $1 AND state IN ('pending', 'retry')",
            [runID])[0].decode(Int.self, at: 0)
    }

    /// Claims up to `limit` uploads of the run that are due, and at most ``maximumBatchBytes`` of
    /// payload, for `worker`, and returns them.
    public func claim(runID: Int64, worker: String, limit: Int, now: Date = Date(), on connection: Connection) throws
        -> [(upload: Upload, attempts: Int)]
    {
        // Rows locked in `due` but left out by the byte budget stay unclaimed: their locks end
        // with the statement, and the next claim takes them.
        let rows = try connection.query(
            """
            WITH due AS (
                SELECT upload_id, state = 'retry' AS retrying FROM reconcile.upload_verifications
                 WHERE last_run_id = $1 AND state IN ('pending', 'retry')
                   AND (next_attempt_at IS NULL OR next_attempt_at <= $4)
                   AND (claimed_at IS NULL OR claimed_at < $4 - make_interval(secs => $5))
                 ORDER BY state = 'retry' DESC, upload_id
                 LIMIT $3
                 FOR UPDATE SKIP LOCKED
            ), sized AS (
                SELECT d.upload_id,
                       row_number() OVER w AS position, sum(octet_length(u.payload)) OVER w AS running_bytes
                  FROM due d JOIN \(uploads) u ON u.id = d.upload_id
                WINDOW w AS (ORDER BY d.retrying DESC, d.upload_id)
            ), claimed AS (
                UPDATE reconcile.upload_verifications v SET claimed_by = $2, claimed_at = $4
                  FROM sized s
                 WHERE v.upload_id = s.upload_id AND (s.position = 1 OR s.running_bytes <= $6)
                RETURNING v.upload_id, v.attempts
            )
            SELECT u.id, u.user_id, u.kind, u.payload, u.application_username, u.app_account_token,
                   u.claimed_transaction_id, u.uploaded_at, c.attempts
              FROM claimed c JOIN \(uploads) u ON u.id = c.upload_id
             ORDER BY u.id
            """, [runID, worker, limit, now, lease, Self.maximumBatchBytes])
        return try rows.map { row in
            (Upload(
                id: try row.decode(Int64.self, "id"), userID: try row.decode(String.self, "user_id"),
                kind: try row.decode(UploadKind.self, "kind"), payload: try row.decode(String.self, "payload"),
                applicationUsername: try row.decode(String?.self, "application_username"),
                appAccountToken: try row.decode(UUID?.self, "app_account_token"),
                claimedTransactionID: try row.decode(String?.self, "claimed_transaction_id"),
                uploadedAt: try row.decode(Date.self, "uploaded_at")),
             try row.decode(Int.self, "attempts"))
        }
    }

    /// Whether other workers still hold unexpired claims on the run's due work.
    public func othersAreWorking(runID: Int64, now: Date = Date(), on connection: Connection) throws -> Bool {
        try connection.queryFirst(
            """
            SELECT 1 FROM reconcile.upload_verifications
             WHERE last_run_id = $1 AND state IN ('pending', 'retry')
               AND (next_attempt_at IS NULL OR next_attempt_at <= $2)
               AND claimed_at >= $2 - make_interval(secs => $3)
             LIMIT 1
            """, runID, now, lease) != nil
    }

    /// Records the verdicts of a batch, with every transaction they confirmed and who carried it,
    /// atomically: a worker killed mid-batch leaves the batch claimed until the lease runs out and
    /// then verified again, never half-recorded.
    public func record(
        _ results: [(upload: Upload, attempts: Int, verdict: Verdict)], runID: Int64, worker: String,
        now: Date = Date(), on connection: Connection
    ) throws {
        guard !results.isEmpty else { return }
        let results = results.map { ($0.upload, $0.attempts, Self.storable($0.verdict)) }
        try connection.transaction {
            var records: [(AppleTransactionRecord, Carrier?)] = []
            var rows: [[any PostgresEncodable]] = []
            for (upload, previousAttempts, verdict) in results {
                let attempts = previousAttempts + 1
                switch verdict {
                case .verified(let verified):
                    rows.append([upload.id, VerificationState.verified, verified.method, verified.appleStatus, nil as String?,
                                 nil as String?, verified.environment.rawValue, verified.bundleID, attempts, nil as Date?])
                    records += verified.transactions.map { ($0, Carrier(upload: upload, record: $0)) }
                case .invalid(let code, let reason, let status):
                    rows.append([upload.id, VerificationState.invalid, nil as String?, status, code, reason, nil as String?, nil as String?,
                                 attempts, nil as Date?])
                case .retry(let reason, let status):
                    // 21002 means "malformed" as well as "try later": once it persists, believe it.
                    let exhausted = status == 21002 && attempts >= maxAttempts
                    // The client already backed off between its attempts: not again in this run
                    // (nor by its workers); the next run's enqueue makes it due at once.
                    let backoff = min(6 * 3600, 60 * pow(2, Double(min(attempts, 12))))
                    rows.append([upload.id, exhausted ? VerificationState.invalid : .retry, nil as String?, status,
                                 exhausted ? VerificationFailure.persistent21002 : .retry, reason, nil as String?, nil as String?,
                                 attempts, exhausted ? nil : now.addingTimeInterval(backoff)])
                }
            }
            // One statement for the batch: its verdicts arrive by COPY. What a verdict does not
            // establish (how and where an upload was verified) stays as it was.
            try connection.execute(
                """
                CREATE TEMP TABLE IF NOT EXISTS stage_verdicts (
                    upload_id bigint, state text, method text, apple_status integer, error_code text, last_error text,
                    environment text, bundle_id text, attempts integer, next_attempt_at timestamptz
                )
                """)
            try connection.execute("TRUNCATE stage_verdicts")
            try connection.copyIn("COPY stage_verdicts FROM STDIN") { writer in
                for row in rows { try writer.append(row) }
            }
            try connection.execute(
                """
                UPDATE reconcile.upload_verifications v
                   SET state = s.state, apple_status = s.apple_status, error_code = s.error_code,
                       last_error = s.last_error, attempts = s.attempts, next_attempt_at = s.next_attempt_at,
                       updated_at = $1, claimed_by = NULL, claimed_at = NULL, last_run_id = $2,
                       method = CASE WHEN s.state = 'verified' THEN s.method ELSE v.method END,
                       environment = CASE WHEN s.state = 'verified' THEN s.environment ELSE v.environment END,
                       bundle_id = CASE WHEN s.state = 'verified' THEN s.bundle_id ELSE v.bundle_id END,
                       verified_at = CASE WHEN s.state = 'verified' THEN $1 ELSE v.verified_at END
                  FROM stage_verdicts s
                 WHERE v.upload_id = s.upload_id
                """, [now, runID])
            try TransactionStore.upsert(records, runID: runID, on: connection)
            Failpoint.pass("verify.record")
        }
    }

    /// The verdict as PostgreSQL can store it. Text cannot hold NUL: a verified upload whose Apple
    /// data holds one is `invalid` (`nul_character`) rather than a failed batch, and a reason
    /// that quotes one has it escaped.
    static func storable(_ verdict: Verdict) -> Verdict {
        switch verdict {
        case .verified(let verified):
            let strings = [verified.method.rawValue, verified.environment.rawValue, verified.bundleID]
            if let record = verified.transactions.first(where: { $0.fieldHoldingNUL != nil }),
                let field = record.fieldHoldingNUL
            {
                return .invalid(
                    code: .nulCharacter,
                    reason: "Apple's data holds a NUL character in \(field) of transaction "
                        + "\(record.transactionID.escapingNUL); PostgreSQL text cannot store it",
                    appleStatus: verified.appleStatus)
            }
            if strings.contains(where: { $0.utf8.contains(0) }) {
                return .invalid(
                    code: .nulCharacter,
                    reason: "Apple's data holds a NUL character in its bundle id or environment; "
                        + "PostgreSQL text cannot store it",
                    appleStatus: verified.appleStatus)
            }
            return verdict
        case .invalid(let code, let reason, let status):
            return .invalid(code: VerificationFailure(rawValue: code.rawValue.escapingNUL), reason: reason.escapingNUL, appleStatus: status)
        case .retry(let reason, let status):
            return .retry(reason: reason.escapingNUL, appleStatus: status)
        }
    }
}
