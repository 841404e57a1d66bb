import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Who runs a command, as the operating system says (issue 36 item 4): on the command line `--by`
/// is only a claim, so every decision records this beside it, and an approval from the login that
/// made the decision is refused like one's own.
///
/// The login of the session (`getlogin`: on Linux the audit login id, which `su` and `sudo` keep,
/// else the terminal's); without one (no terminal, no audit id: cron, a container), `SUDO_USER`
/// when the command runs as root (sudo sets it; from anyone else it is only another claim); else
/// the effective user's name (`getpwuid(geteuid())`).
enum OperatingSystemLogin {
    static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let login = getlogin().map({ String(cString: $0) }), !login.isEmpty { return login }
        let euid = geteuid()
        if euid == 0, let sudoUser = environment["SUDO_USER"], !sudoUser.isEmpty { return sudoUser }
        if let entry = getpwuid(euid), let name = entry.pointee.pw_name { return String(cString: name) }
        return "uid \(euid)"
    }
}
