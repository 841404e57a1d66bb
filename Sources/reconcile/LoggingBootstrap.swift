import ArgumentParser
import Foundation
import Logging
import Reconciliation

/// Structured log formats for the one `LoggingSystem.bootstrap` of the process.
enum LogFormat: String, ExpressibleByArgument, CaseIterable {
    case logfmt
    case json
}

enum LoggingBootstrap {
    private static let once: Void = ()
    nonisolated(unsafe) private static var done = false
    private static let lock = NSLock()

    static func bootstrap(format: LogFormat, level: Logger.Level) {
        lock.lock()
        defer { lock.unlock() }
        guard !done else { return }
        done = true
        LoggingSystem.bootstrap { label in
            var handler = StructuredLogHandler(label: label, format: format)
            handler.logLevel = level
            return handler
        }
    }
}

/// Writes one line per event to standard error, as logfmt or JSON, with metadata keys sorted.
struct StructuredLogHandler: LogHandler {
    let label: String
    let format: LogFormat
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = metadata
        if let extra = event.metadata { fields.merge(extra) { $1 } }
        let line = StructuredLogHandler.render(
            format: format, time: Date(), level: event.level, label: label, message: "\(event.message)",
            metadata: fields)
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    static func render(
        format: LogFormat, time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata
    ) -> String {
        let timestamp = time.formatted(.iso8601)
        let pairs = [("time", timestamp), ("level", level.rawValue), ("logger", label), ("msg", message)]
            + metadata.keys.sorted().map { ($0, "\(metadata[$0]!)") }
        switch format {
        case .logfmt:
            return pairs.map { "\($0)=\(logfmtValue($1))" }.joined(separator: " ")
        case .json:
            return "{" + pairs.map { "\(JSONText.string($0)):\(JSONText.string($1))" }.joined(separator: ",") + "}"
        }
    }

    private static func logfmtValue(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "=" || $0 == "\"" || $0.isNewline }
        return needsQuotes ? JSONText.string(value) : value
    }
}
