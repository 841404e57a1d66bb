import Foundation
import Glibc

/// One of this package's executables run to its end as a child process whose peak resident
/// memory the kernel reports when it is reaped (`wait4`'s `ru_maxrss`): the measure of the whole
/// process, not of samples taken by a timer, and untouched by what else the test process does.
public struct MeasuredRun: Sendable {
    /// The exit status (128 + N when signal N ended it).
    public let status: Int32
    /// The child's peak resident set size, in bytes.
    public let peakResidentBytes: Int
    /// What it printed on standard output and standard error.
    public let output: String

    /// Runs `executable` with exactly `environment` (plus PATH), its output in files under
    /// `logDirectory` named after `label`. A child still running after `timeout` is killed and
    /// the call throws: a hang is a failure.
    public static func run(
        _ executable: URL, arguments: [String], environment: [String: String], logDirectory: URL, label: String,
        timeout: Duration = .seconds(600)
    ) async throws -> MeasuredRun {
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        let out = logDirectory.appendingPathComponent("\(label).out").path
        let err = logDirectory.appendingPathComponent("\(label).err").path
        var environment = environment
        environment["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        var usage = rusage()
        while true {
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECHILD) }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                _ = wait4(pid, &status, 0, &usage)
                throw TestSetupError("\(executable.lastPathComponent) still ran after \(timeout) and was killed")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = status & 0x7f
        let exit = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        let output = "stdout: \((try? String(contentsOfFile: out, encoding: .utf8)) ?? "")\n"
            + "stderr: \((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")"
        return MeasuredRun(status: exit, peakResidentBytes: usage.ru_maxrss * 1024, output: output)
    }
}
