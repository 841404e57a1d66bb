import Foundation
import Glibc

/// One of this package's executables run to its end as a child process, with its peak resident
/// memory: the kernel's high-water mark of the child's own address space (`VmHWM` of
/// `/proc/<pid>/status`), read every 20 ms while it runs: a high-water mark, so an earlier peak is
/// never missed, only growth in the child's last 20 ms could be.
///
/// Not `wait4`'s `ru_maxrss`: glibc's `posix_spawn` shares the parent's address space until the
/// exec (`CLONE_VM | CLONE_VFORK`), and Linux folds the old address space's high-water mark into
/// the process's `maxrss` at exec. The child then reports at least the test process's own size at
/// the moment it was spawned (212 MB with every suite running, for a run that peaked at 58 MB).
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
        var highWater = 0
        while true {
            highWater = max(highWater, Self.highWaterMark(of: pid) ?? 0)
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECHILD) }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                _ = wait4(pid, &status, 0, &usage)
                throw TestSetupError("\(executable.lastPathComponent) still ran after \(timeout) and was killed")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = status & 0x7f
        let exit = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        let output = "stdout: \((try? String(contentsOfFile: out, encoding: .utf8)) ?? "")\n"
            + "stderr: \((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")"
        // A child that ended before its first read: only the kernel's figure, an upper bound.
        return MeasuredRun(
            status: exit, peakResidentBytes: highWater > 0 ? highWater : usage.ru_maxrss * 1024, output: output)
    }

    /// `VmHWM` of a running process, in bytes: the peak resident size of its own address space
    /// since its exec (a high-water mark, so a read late in its life still sees an earlier peak).
    static func highWaterMark(of pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }
}
