import Foundation
import Reconciliation

/// A live progress line on a terminal (uploads verified, rate, ETA); silent when standard error
/// is not a TTY, as under cron.
enum ProgressLine {
    static let isTerminal = isatty(STDERR_FILENO) == 1

    static func standardError() -> (@Sendable (RunProgress) -> Void)? {
        guard isTerminal else { return nil }
        return { progress in
            let rate = progress.elapsed > 0 ? Double(progress.verified) / progress.elapsed : 0
            let remaining = max(0, progress.total - progress.verified)
            let eta = rate > 0 ? Int(Double(remaining) / rate) : 0
            let line = String(
                format: "\r\u{1B}[2Kverifying uploads: %d/%d  %.0f/s  ETA %dm%02ds", progress.verified, progress.total,
                rate, eta / 60, eta % 60)
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    static func clear() {
        guard isTerminal else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}
