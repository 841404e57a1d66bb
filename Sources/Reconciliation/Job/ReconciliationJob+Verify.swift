import Foundation
import Logging
import Postgres

extension ReconciliationJob {
    /// One upload's verdict, with the attempts it had before.
    typealias VerifiedResult = (upload: Upload, attempts: Int, verdict: Verdict)

    /// Claims the run's due uploads and verifies them with `RECONCILE_CONCURRENCY` requests out at
    /// all times, until none is due. The pipe never drains between batches: the next batch is
    /// claimed as soon as the last one is all sent, and verdicts are recorded (a batch at a time,
    /// each atomically with its transactions) while the next requests are out, so Apple's latency,
    /// not the database's round trips, sets the pace. `recorded` sees each batch once it is
    /// committed. Every verdict is watched for an Apple outage as it arrives: past
    /// `AppleOutage.threshold` unanswered uploads in a row, what has finished is recorded and the
    /// verification stops with `AppleUnreachableError`, so an outage costs at most the threshold
    /// plus the requests already out, however the verdicts happen to be batched.
    ///
    /// With `waitForOtherWorkers`, the run waits for workers (`run --worker`) still holding
    /// claims; their claims expire if they die, and the work comes back here.
    func verifyDue(
        queue: VerificationQueue, runID: Int64, waitForOtherWorkers: Bool, connection: Connection, logger: Logger,
        recorded: ([VerifiedResult]) throws -> Void
    ) async throws {
        let verifier = self.verifier
        let limit = max(1, settings.concurrency)
        var outage = AppleOutage(threshold: max(20, 2 * limit))
        try await withThrowingTaskGroup(of: VerifiedResult.self) { group in
            var claimed: [(upload: Upload, attempts: Int)] = []
            var sent = 0
            var inFlight = 0
            var nothingDue = false
            var finished: [VerifiedResult] = []

            func record() throws {
                try queue.record(finished, runID: runID, worker: worker, on: connection)
                Failpoint.pass("verify.recorded")
                let batch = finished
                finished.removeAll(keepingCapacity: true)
                try recorded(batch)
            }

            while true {
                try Task.checkCancellation()
                while inFlight < limit {
                    if sent == claimed.count && !nothingDue {
                        claimed = try queue.claim(runID: runID, worker: worker, limit: batchSize, on: connection)
                        sent = 0
                        nothingDue = claimed.isEmpty
                    }
                    guard sent < claimed.count else { break }
                    let (upload, attempts) = claimed[sent]
                    sent += 1
                    inFlight += 1
                    group.addTask { (upload, attempts, try await verifier.verify(upload, attempt: attempts + 1)) }
                }
                if inFlight == 0 {
                    if !finished.isEmpty { try record() }
                    guard waitForOtherWorkers, try queue.othersAreWorking(runID: runID, on: connection) else { return }
                    try await Task.sleep(for: .milliseconds(250))
                    nothingDue = false
                    continue
                }
                guard let result = try await group.next() else { continue }
                inFlight -= 1
                Failpoint.pass("verify.verdict")
                log(result, logger)
                finished.append(result)
                outage.observe(result.verdict)
                if outage.isOngoing {
                    try record()
                    throw AppleUnreachableError(unanswered: outage.unanswered, lastReason: outage.lastReason, left: 0)
                }
                if finished.count >= batchSize { try record() }
            }
        }
    }

    private func log(_ result: VerifiedResult, _ logger: Logger) {
        var log = logger
        log[metadataKey: "upload.id"] = "\(result.upload.id)"
        switch result.verdict {
        case .verified(let verified):
            log.debug("upload verified", metadata: ["apple.environment": "\(verified.environment)",
                                                    "transactions": "\(verified.transactions.count)"])
        case .invalid(let code, let reason, let status):
            log.info("upload invalid", metadata: ["reason.code": "\(code)", "reason": "\(reason)",
                                                  "apple.status": "\(status.map(String.init) ?? "")"])
        case .retry(let reason, let status):
            log.notice("upload will be retried", metadata: ["reason": "\(reason)",
                                                            "apple.status": "\(status.map(String.init) ?? "")"])
        }
    }
}
