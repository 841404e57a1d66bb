import Foundation
import Hummingbird
import Synchronization

/// verifyReceipt answers judged ahead (`appstore-sim serve --prepared-answers`).
///
/// Apple reads, authenticates and answers a receipt on its own machines. The simulator does it on
/// the machine of the client it serves, about a millisecond of CPU per receipt, so a throughput
/// measurement would time the simulator as much as the client. Receipts posted to
/// `/sim/prepared-answers` are judged once, at that moment; a verifyReceipt request for one of
/// them then costs a lookup. Routing between production and sandbox, the shared secret, faults and
/// latency still apply per request. The answer's `request_date` is the time of preparation.
final class PreparedAnswers: Sendable {
    private let judgements = Mutex<[String: AppStoreSimulator.ReceiptJudgement]>([:])

    func judgement(of compactReceipt: String) -> AppStoreSimulator.ReceiptJudgement? {
        judgements.withLock { $0[compactReceipt] }
    }

    func store(_ judgement: AppStoreSimulator.ReceiptJudgement, for compactReceipt: String) {
        judgements.withLock { $0[compactReceipt] = judgement }
    }

    var count: Int { judgements.withLock { $0.count } }
}

extension AppStoreSimulator {
    func addPreparedAnswerRoutes(to router: Router<BasicRequestContext>) {
        let simulator = self
        router.post("sim/prepared-answers") { request, _ in
            await simulator.prepareAnswers(request)
        }
    }

    private func prepareAnswers(_ request: Request) async -> Response {
        guard let preparedAnswers else { return Response(status: .notFound) }
        do {
            var request = request
            let body = try await request.collectBody(upTo: 1 << 30)
            let now = Date()
            var prepared = 0
            for line in body.readableBytesView.split(separator: UInt8(ascii: "\n")) {
                let compact = Self.compact(String(decoding: line, as: UTF8.self))
                guard !compact.isEmpty else { continue }
                preparedAnswers.store(await judge(compact, now: now), for: compact)
                prepared += 1
            }
            return Self.json(["prepared": prepared, "total": preparedAnswers.count])
        } catch {
            return Self.json(["error": "\(error)"], status: .badRequest)
        }
    }
}
