import Crypto
import Foundation
import Reconciliation
import _CryptoExtras

/// `RECONCILE_WEB_USERS_FILE`: the people who may log in to the pages, each with their own password
/// (SPEC section 8's "users file"). With it, the name recorded with a decision is the name of a
/// person who proved it, so a second person's approval (section 17) is another person's; with the
/// shared `RECONCILE_WEB_TOKEN` alone, a name is whatever was typed beside the token.
///
/// One person a line, `name:hash`, the hash as `reconcile web-user NAME` prints it (scrypt, in the
/// PHC string format: `$scrypt$ln=15,r=8,p=1$<salt>$<key>`, base64 without padding); blank lines
/// and lines starting with `#` are skipped.
public struct WebUsers: Sendable {
    private let hashes: [String: PasswordHash]
    /// Checked when a name is not in the file, so that an unknown name costs what a known one does.
    private let decoy: PasswordHash

    /// The names, sorted.
    public var names: [String] { hashes.keys.sorted() }

    /// Reads a users file's text; a bad line is refused with its number and why (never the hash).
    public init(parsing text: String) throws(WebUsersError) {
        var hashes: [String: PasswordHash] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let number = index + 1
            guard let colon = line.firstIndex(of: ":") else {
                throw WebUsersError(line: number, problem: "expected name:hash")
            }
            let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            guard (try? ReviewActor.validatedName(name)) == name else {
                throw WebUsersError(line: number, problem: "the name is empty, too long or holds characters a name cannot")
            }
            guard hashes[name] == nil else { throw WebUsersError(line: number, problem: "\(name) is listed twice") }
            guard let hash = PasswordHash(phc: String(line[line.index(after: colon)...])) else {
                throw WebUsersError(
                    line: number,
                    problem: "the hash is not one `reconcile web-user` prints ($scrypt$ln=…,r=…,p=…$salt$key)")
            }
            hashes[name] = hash
        }
        guard !hashes.isEmpty else { throw WebUsersError(line: nil, problem: "lists nobody") }
        self.hashes = hashes
        decoy = PasswordHash(phc: PasswordHash.make(password: UUID().uuidString))!
    }

    /// A users-file hash of `password` (`reconcile web-user`).
    public static func hash(password: String) -> String { PasswordHash.make(password: password) }

    /// Reads the users file at `path`.
    public static func load(path: String) throws -> WebUsers {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw WebUsersError(line: nil, problem: "cannot be read (\(path))")
        }
        return try WebUsers(parsing: text)
    }

    /// The person's name as listed when `password` is theirs; nil otherwise. An unknown name costs
    /// one scrypt as a known one does, so timing does not tell which names exist.
    func authenticate(name: String, password: String) -> String? {
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let hash = hashes[name] else {
            _ = decoy.matches(password)
            return nil
        }
        return hash.matches(password) ? name : nil
    }
}

/// A users file that cannot be used: which line and why.
public struct WebUsersError: Error, CustomStringConvertible {
    public var line: Int?
    public var problem: String
    public var description: String {
        "RECONCILE_WEB_USERS_FILE" + (line.map { " line \($0)" } ?? "") + ": " + problem
    }
}

/// A password's scrypt hash in the PHC string format.
struct PasswordHash: Sendable {
    /// log2 of scrypt's N, its r and p: 2^15 × 8 × 128 bytes is 32 MB and about 0.1 s a login.
    static let defaultParameters = (logN: 15, r: 8, p: 1)

    let logN: Int
    let r: Int
    let p: Int
    let salt: [UInt8]
    let key: [UInt8]

    /// Parses `$scrypt$ln=15,r=8,p=1$<salt>$<key>`; parameters beyond what a login should cost
    /// (over 2^20, r over 32, p over 16) are refused.
    init?(phc: String) {
        let parts = phc.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt" else { return nil }
        var parameters: [Substring: Int] = [:]
        for pair in parts[2].split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let value = Int(kv[1]) else { return nil }
            parameters[kv[0]] = value
        }
        guard parameters.count == 3, let logN = parameters["ln"], let r = parameters["r"], let p = parameters["p"],
            (10...20).contains(logN), (1...32).contains(r), (1...16).contains(p),
            let salt = Self.base64(parts[3]), salt.count >= 16, let key = Self.base64(parts[4]), key.count >= 32
        else { return nil }
        (self.logN, self.r, self.p, self.salt, self.key) = (logN, r, p, salt, key)
    }

    /// A new hash of `password` with a random salt.
    static func make(password: String) -> String {
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max) }
        let (logN, r, p) = defaultParameters
        let key = derive(password, salt: salt, logN: logN, r: r, p: p, count: 32)
        return "$scrypt$ln=\(logN),r=\(r),p=\(p)$\(unpadded(salt))$\(unpadded(key))"
    }

    /// Whether `password` derives this key, compared in constant time.
    func matches(_ password: String) -> Bool {
        let derived = Self.derive(password, salt: salt, logN: logN, r: r, p: p, count: key.count)
        guard derived.count == key.count else { return false }
        return zip(derived, key).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func derive(_ password: String, salt: [UInt8], logN: Int, r: Int, p: Int, count: Int) -> [UInt8] {
        guard let key = try? KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: count, rounds: 1 << logN, blockSize: r,
            parallelism: p)
        else { return [] }
        return key.withUnsafeBytes { Array($0) }
    }

    private static func unpadded(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    private static func base64(_ text: Substring) -> [UInt8]? {
        let padded = text + String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: String(padded)).map(Array.init)
    }
}
