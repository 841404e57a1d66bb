import Foundation

/// One of this package's executables (`reconcile`, `appstore-sim`) run as a child process, for
/// the tests that kill, stop and signal the real program. Its output goes to files beside each
/// other in a log folder, so a chatty child can never block on a full pipe.
public final class ChildProcess: @unchecked Sendable {
    /// The running process.
    public let process: Process
    /// What the child printed on standard output.
    public let standardOutputFile: URL
    /// What the child printed on standard error.
    public let standardErrorFile: URL

    /// The executable `name` built next to the test bundle (`swift build --build-tests` and
    /// `swift test` put every product of the package in one folder).
    public static func executable(_ name: String) throws -> URL {
        let bundle = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let candidate = URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
            throw TestSetupError("\(candidate.path) is missing: build it with swift build --build-tests")
        }
        return candidate
    }

    /// Starts `executable` with exactly `environment` (plus PATH), output under `logDirectory`
    /// named after `label`.
    public init(
        _ executable: URL, arguments: [String], environment: [String: String], logDirectory: URL, label: String
    ) throws {
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        standardOutputFile = logDirectory.appendingPathComponent("\(label).out")
        standardErrorFile = logDirectory.appendingPathComponent("\(label).err")
        _ = FileManager.default.createFile(atPath: standardOutputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: standardErrorFile.path, contents: nil)
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = environment
        environment["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: standardOutputFile)
        process.standardError = try FileHandle(forWritingTo: standardErrorFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// The child's process id.
    public var pid: Int32 { process.processIdentifier }

    /// Sends a signal while the child runs: once reaped, its pid may be another process's.
    public func send(_ signal: Int32) {
        guard process.isRunning else { return }
        kill(pid, signal)
    }

    /// The state letter of `/proc/PID/stat` (`R`, `S`, `T` stopped, `Z` …), nil once reaped.
    public var state: Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }

    /// Waits until the child stopped itself (a failpoint's SIGSTOP). Throws, with what the child
    /// printed, if it exits instead or does not stop within `timeout`.
    public func waitUntilStopped(timeout: Duration = .seconds(120)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if state == "T" { return }
            if !process.isRunning {
                throw TestSetupError("the child exited (\(process.terminationStatus)) instead of stopping: \(output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        send(SIGKILL)
        throw TestSetupError("the child did not stop within \(timeout): \(output)")
    }

    /// Waits for the child to end and returns its exit status (128 + N when a signal N ended it).
    /// A child still running after `timeout` is killed and the wait throws: a hang is a failure.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(180)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                send(SIGKILL)
                while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
                throw TestSetupError("the child still ran after \(timeout) and was killed: \(output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let status = process.terminationStatus
        return process.terminationReason == .uncaughtSignal ? 128 + status : status
    }

    /// Kills the child with SIGKILL and waits until it is gone.
    public func killNow() async throws {
        send(SIGKILL)
        _ = try await waitForExit(timeout: .seconds(30))
    }

    /// What the child printed on standard error.
    public var standardError: String {
        (try? String(contentsOf: standardErrorFile, encoding: .utf8)) ?? ""
    }

    /// What the child printed on standard output.
    public var standardOutput: String {
        (try? String(contentsOf: standardOutputFile, encoding: .utf8)) ?? ""
    }

    /// Both outputs, for failure messages.
    public var output: String { "stdout: \(standardOutput)\nstderr: \(standardError)" }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
