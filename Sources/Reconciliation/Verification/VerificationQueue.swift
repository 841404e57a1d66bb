import Foundation
import Postgres

/// Verification work in `reconcile.upload_verifications`: enqueued per run, claimed in batches
/// with `FOR UPDATE SKIP LOCKED` (so several workers share a window and each upload is verified
/// once), and recorded together with the transactions it confirmed in one transaction per batch.
public struct VerificationQueue: Sendable {
    /// The uploads relation.
    public let uploads: QualifiedRelation
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
    public init(uploads: QualifiedRelation, lease: TimeInterval = 300, maxAttempts: Int) {
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
        let relations = ["uploads": uploads]
        try connection.execute(SQL.enqueueArrivals, ["run_id": runID], relations: relations)
        try connection.execute(
            SQL.enqueueWindow, ["run_id": runID, "since": since ?? Date.distantPast, "until": until],
            relations: relations)
        try connection.execute(SQL.makeDue, ["run_id": runID])
        try connection.execute(
            SQL.rejectOversized, ["run_id": runID, "limit": Self.maximumPayloadBytes], relations: relations)
        return try connection.query(SQL.dueCount, ["run_id": runID])[0].decode(Int.self, at: 0)
    }

    /// Claims up to `limit` uploads of the run that are due, and at most ``maximumBatchBytes`` of
    /// payload, for `worker`, and returns them.
    public func claim(runID: Int64, worker: String, limit: Int, now: Date = Date(), on connection: Connection) throws
        -> [(upload: Upload, attempts: Int)]
    {
        let rows = try connection.query(
            SQL.claim,
            ["run_id": runID, "worker": worker, "limit": limit, "now": now, "lease": lease,
             "batch_bytes": Self.maximumBatchBytes],
            relations: ["uploads": uploads])
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
        try connection.queryFirst(SQL.othersWorking, ["run_id": runID, "now": now, "lease": lease]) != nil
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
                // Whose upload it is, whatever the verdict: its kind's store.
                let store = Store(uploadKind: upload.kind) ?? .appStore
                switch verdict {
                case .verified(let verified):
                    rows.append([upload.id, VerificationState.verified, verified.method, verified.appleStatus, nil as String?,
                                 nil as String?, verified.environment.rawValue, verified.bundleID, attempts, nil as Date?,
                                 store])
                    records += verified.transactions.map { ($0, Carrier(upload: upload, record: $0)) }
                case .invalid(let code, let reason, let status):
                    rows.append([upload.id, VerificationState.invalid, nil as String?, status, code, reason, nil as String?, nil as String?,
                                 attempts, nil as Date?, store])
                case .retry(let reason, let status):
                    // 21002 means "malformed" as well as "try later": once it persists, believe it.
                    let exhausted = status == 21002 && attempts >= maxAttempts
                    // The client already backed off between its attempts: not again in this run
                    // (nor by its workers); the next run's enqueue makes it due at once.
                    let backoff = min(6 * 3600, 60 * pow(2, Double(min(attempts, 12))))
                    rows.append([upload.id, exhausted ? VerificationState.invalid : .retry, nil as String?, status,
                                 exhausted ? VerificationFailure.persistent21002 : .retry, reason, nil as String?, nil as String?,
                                 attempts, exhausted ? nil : now.addingTimeInterval(backoff), store])
                }
            }
            // One statement for the batch: its verdicts arrive by COPY.
            try connection.execute(SQL.stageVerdicts)
            try connection.copyIn(SQL.copyVerdicts) { writer in
                for row in rows { try writer.append(row) }
            }
            try connection.execute(SQL.applyVerdicts, ["now": now, "run_id": runID])
            try TransactionStore.upsert(records, runID: runID, on: connection)
            Failpoint.pass("verify.record")
        }
    }

    /// The statements, in `sql/verification/`.
    enum SQL {
        static let enqueueArrivals: SQLFile = "verification/enqueue_arrivals.sql"
        static let enqueueWindow: SQLFile = "verification/enqueue_window.sql"
        static let makeDue: SQLFile = "verification/make_due.sql"
        static let rejectOversized: SQLFile = "verification/reject_oversized.sql"
        static let dueCount: SQLFile = "verification/due_count.sql"
        static let claim: SQLFile = "verification/claim.sql"
        static let othersWorking: SQLFile = "verification/others_working.sql"
        static let stageVerdicts: SQLFile = "verification/stage_verdicts.sql"
        static let copyVerdicts: SQLFile = "verification/copy_verdicts.sql"
        static let applyVerdicts: SQLFile = "verification/apply_verdicts.sql"
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
