import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// How verification work is claimed: in batches bounded by count and by payload bytes.
@Suite("Verification queue")
struct VerificationQueueTests {
    /// Five 5 MiB receipts and three small ones: no batch holds more than the byte budget
    /// (unless it is a single upload), and every upload is claimed exactly once.
    @Test func aBatchHoldsAtMostTheByteBudgetAndEveryUploadOnce() throws {
        let (_, connection) = try TestDatabase.migrated("queue_bytes")
        let large = 5 << 20
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, uploaded_at)
            SELECT 'u' || n, 'receipt', CASE WHEN n <= 5 THEN repeat('A', $1) ELSE 'AAAA' END, now() - interval '1 hour'
              FROM generate_series(1, 8) AS n
            """, [large])
        let run = try RunLedger.start(
            since: nil, until: Date(), environment: .production, dryRun: false, on: connection)
        let queue = VerificationQueue(uploads: Differ.Relations.standard.uploads, maxAttempts: 5)
        #expect(try queue.enqueue(runID: run, since: nil, until: Date(), on: connection) == 8)

        var batches: [[Upload]] = []
        while true {
            let batch = try queue.claim(runID: run, worker: "w", limit: 64, on: connection)
            if batch.isEmpty { break }
            batches.append(batch.map(\.upload))
        }
        #expect(batches.map(\.count) == [3, 5])
        for batch in batches {
            let bytes = batch.reduce(0) { $0 + $1.payload.utf8.count }
            #expect(batch.count == 1 || bytes <= VerificationQueue.maximumBatchBytes, "\(bytes) bytes in one batch")
        }
        let claimed = batches.flatMap { $0.map(\.id) }
        #expect(claimed.count == 8 && Set(claimed).count == 8)
    }
}
