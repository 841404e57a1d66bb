import Foundation
import NIOCore
import Reconciliation

/// Carries the queue's CSV from a database thread to the HTTP response, chunk by chunk, with
/// back-pressure: the thread writing rows (it owns a libpq connection and may block) waits while
/// the client has not taken the last few chunks, so memory stays bounded whatever the queue's size.
/// When the consumer goes away (the client disconnected, the response failed), the waiting writer
/// is released with `ExportStream.Abandoned` and the export's query is cancelled, freeing the
/// connection.
final class ExportStream: Sendable {
    typealias Producer = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, Demand
    >

    /// The consumer went away before the export was written.
    struct Abandoned: Error, CustomStringConvertible {
        var description: String { "the client went away" }
    }

    /// The client took nothing for the stall timeout, or the export ran past its time limit: it
    /// is aborted so that a paused or crawling download cannot hold a database connection.
    struct TooSlow: Error, CustomStringConvertible {
        let description: String
    }

    /// Rows are gathered into chunks of about this many bytes before they are handed on.
    static let chunkSize = 64 * 1024

    let chunks: Producer
    private let source: Producer.Source
    private let demand: Demand

    private let stallTimeout: Duration
    private let ends: ContinuousClock.Instant
    private let timeLimit: Duration

    /// A stream whose writer gives up when the client takes no chunk for `stallTimeout`, or when
    /// the whole export takes longer than `timeLimit`.
    init(stallTimeout: Duration = .seconds(30), timeLimit: Duration = .seconds(600)) {
        self.stallTimeout = stallTimeout
        self.timeLimit = timeLimit
        ends = .now + timeLimit
        demand = Demand()
        // At most 4 chunks wait for the client; the writer resumes when 1 is left.
        let made = Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: 1, highWatermark: 4), finishOnDeinit: true, delegate: demand)
        chunks = made.sequence
        source = made.source
    }

    /// Runs `export` (on the calling thread, which may block), gathering what it writes into
    /// chunks; the stream ends after its last chunk, or with the error `export` threw, which is
    /// returned too (the response is then aborted, never finished as if complete).
    @discardableResult
    func produce(_ export: ((String) throws -> Void) throws -> Void) -> (any Error)? {
        var pending = ""
        do {
            try export { text in
                pending += text
                if pending.utf8.count >= Self.chunkSize {
                    try push(ByteBuffer(string: pending))
                    pending = ""
                }
            }
            if !pending.isEmpty { try push(ByteBuffer(string: pending)) }
            source.finish()
            return nil
        } catch {
            source.finish(error)
            return error
        }
    }

    /// Ends the stream with an error that kept `produce` from running (no connection was free).
    func fail(_ error: any Error) {
        source.finish(error)
    }

    /// Hands one chunk on; blocks while the consumer is behind; throws once it has gone.
    private func push(_ chunk: ByteBuffer) throws {
        guard ContinuousClock.now < ends else {
            throw TooSlow(description: "the export took longer than \(timeLimit)")
        }
        demand.expectWait()
        switch source.yield(chunk) {
        case .produceMore:
            return
        case .stopProducing:
            let deadline = min(ContinuousClock.now + stallTimeout, ends)
            switch demand.waitForMore(until: deadline) {
            case .more: return
            case .gone: throw Abandoned()
            case .timedOut:
                throw TooSlow(description: "the client took nothing for \(stallTimeout), or the export took longer than \(timeLimit)")
            }
        case .dropped:
            throw Abandoned()
        }
    }

    /// The consumer's side of the back-pressure: whether it wants more, or has gone.
    final class Demand: NIOAsyncSequenceProducerDelegate, @unchecked Sendable {
        // Guards `wanted` and `terminated`; signalled when either changes.
        private let condition = NSCondition()
        private var wanted = false
        private var terminated = false

        /// Called before each chunk is offered: a wait after it lasts until the next `produceMore`.
        func expectWait() {
            condition.withLock { wanted = false }
        }

        enum Answer { case more, gone, timedOut }

        /// Blocks until the consumer wants more, has gone, or `deadline` passes.
        func waitForMore(until deadline: ContinuousClock.Instant) -> Answer {
            condition.lock()
            defer { condition.unlock() }
            while !wanted && !terminated {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return .timedOut }
                let (seconds, attoseconds) = left.components
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) * 1e-18))
            }
            return terminated ? .gone : .more
        }

        func produceMore() {
            condition.withLock { wanted = true }
            condition.broadcast()
        }

        func didTerminate() {
            condition.withLock { terminated = true }
            condition.broadcast()
        }
    }
}

/// The one consumer of an export's chunks, moved from the handler into the response body.
final class ExportChunks: @unchecked Sendable {
    // Only the handler (for the first chunk) and then the response body (for the rest) read it,
    // one after the other, never at once.
    private var iterator: ExportStream.Producer.AsyncIterator

    init(_ stream: ExportStream) {
        iterator = stream.chunks.makeAsyncIterator()
    }

    func next() async throws -> ByteBuffer? {
        try await iterator.next()
    }
}
