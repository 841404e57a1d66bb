import Foundation
import GooglePlay
import Logging
import Synchronization
import _CryptoExtras

/// The settings that make the simulator the job's Google Play, as `appstore-sim serve` prints them.
public struct PlaySimulatorSettings: Sendable, Hashable {
    /// `GOOGLE_PLAY_PACKAGE_NAMES`.
    public var packageNames: [String]
    /// Package → base64 SubjectPublicKeyInfo (`GOOGLE_PLAY_LICENSE_KEYS=PKG=KEY,…`).
    public var licenseKeys: [String: String]
    /// `GOOGLE_PLAY_SERVICE_ACCOUNT_FILE`; nil for a simulator without a state directory
    /// (``serviceAccountJSON`` holds the same file's text).
    public var serviceAccountFile: String?
    /// The key file's JSON, `token_uri` the simulator's `/token`.
    public var serviceAccountJSON: Data
    /// `GOOGLE_PLAY_API_URL`.
    public var apiURL: String
    /// The token endpoint (the key file's `token_uri`).
    public var tokenURI: String

    /// `GOOGLE_PLAY_LICENSE_KEYS`'s value, packages in ``packageNames`` order.
    public var licenseKeysSetting: String {
        packageNames.compactMap { name in licenseKeys[name].map { "\(name)=\($0)" } }.joined(separator: ",")
    }

    /// The job's environment variables for this Google Play (the service account file only when on disk).
    public var jobEnvironment: [String: String] {
        var environment = [
            "GOOGLE_PLAY_PACKAGE_NAMES": packageNames.joined(separator: ","),
            "GOOGLE_PLAY_LICENSE_KEYS": licenseKeysSetting,
            "GOOGLE_PLAY_API_URL": apiURL,
        ]
        environment["GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"] = serviceAccountFile
        return environment
    }
}

/// The simulator's Google Play: licence keys per package, a service account whose assertions its
/// OAuth token endpoint accepts, and the purchases the Google Play Developer API serves (SPEC section 18).
/// Keys are made on first use (and kept in the state directory when there is one), so that a
/// simulator that never plays Google Play never spends the RSA key generation.
public final class PlaySimulator: Sendable {
    /// The package names the printed settings name (`--play-package`); purchases may name others.
    public let packageNames: [String]
    let stateDirectory: URL?
    let host: String
    let logger: Logger
    let store: PlayPurchaseStore
    private let licenseKeys = Mutex<[String: PlayLicenseKey]>([:])
    private let account = Mutex<PlayServiceAccount?>(nil)
    private let listening = Mutex<String?>(nil)

    /// The keys of simulators without a state directory, shared by all of them in this process
    /// (tests start dozens): an RSA-2048 key takes a good part of a second to make on a loaded
    /// machine, and making it holds a thread of the cooperative pool, whose few threads other
    /// tests' timing depends on.
    private struct MemoryKeys {
        var licenses: [String: PlayLicenseKey] = [:]
        var account: PlayServiceAccount?
    }

    private static let memoryKeys = Mutex(MemoryKeys())

    /// The packages of simulator runs that name none.
    public static let defaultPackageNames = ["com.example.game"]

    init(packageNames: [String], stateDirectory: URL?, host: String, pushURL: String?, logger: Logger) {
        self.packageNames = packageNames.isEmpty ? Self.defaultPackageNames : packageNames
        self.stateDirectory = stateDirectory
        self.host = host
        self.logger = logger
        store = PlayPurchaseStore(pushURL: pushURL)
    }

    // MARK: - Keys and settings

    /// The licence key of `packageName`, loaded or made on first use.
    public func licenseKey(for packageName: String) throws -> PlayLicenseKey {
        try licenseKeys.withLock { keys in
            if let key = keys[packageName] { return key }
            let key =
                if let stateDirectory {
                    try PlayLicenseKey.loadOrCreate(packageName: packageName, stateDirectory: stateDirectory)
                } else {
                    try Self.memoryKeys.withLock { shared in
                        if let key = shared.licenses[packageName] { return key }
                        let key = try PlayLicenseKey.generate(packageName: packageName)
                        shared.licenses[packageName] = key
                        return key
                    }
                }
            keys[packageName] = key
            return key
        }
    }

    /// The service account, loaded or made on first use.
    public func serviceAccount() throws -> PlayServiceAccount {
        try account.withLock { account in
            if let account { return account }
            let made =
                if let stateDirectory {
                    try PlayServiceAccount.loadOrCreate(stateDirectory: stateDirectory)
                } else {
                    try Self.memoryKeys.withLock { shared in
                        if let account = shared.account { return account }
                        let account = try PlayServiceAccount.generate()
                        shared.account = account
                        return account
                    }
                }
            account = made
            return made
        }
    }

    /// Makes (or loads) the service account's key and the licence keys of the configured packages
    /// and of `packages`, on a thread of their own: RSA key generation must not hold a thread of
    /// the cooperative pool, which the other requests and tests share. The routes call it before
    /// they need a key; after it, ``licenseKey(for:)`` and ``serviceAccount()`` return at once.
    public func prepareKeys(for packages: [String] = []) async throws {
        let names = packageNames + packages.filter { !packageNames.contains($0) }
        try await Self.offPool { [self] in
            _ = try serviceAccount()
            for name in names { _ = try licenseKey(for: name) }
        }
    }

    /// Runs `work` on a new thread and waits for it without blocking the caller's.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Called once the server listens: the key file's `token_uri` names the bound port.
    func serverDidStart(port: Int) {
        let base = "http://\(host):\(port)"
        listening.withLock { $0 = base }
        guard let stateDirectory else { return }
        do {
            try serviceAccount().write(tokenURI: base + "/token", stateDirectory: stateDirectory)
        } catch {
            logger.error("could not write the Play service account key file", metadata: ["error": "\(error)"])
        }
    }

    /// `http://host:port` once listening.
    var baseURL: String? { listening.withLock { $0 } }

    /// The settings for a simulator at `baseURL` (default: where this one listens).
    public func settings(baseURL: String? = nil) throws -> PlaySimulatorSettings {
        let base = baseURL ?? self.baseURL ?? "http://\(host)"
        var keys: [String: String] = [:]
        for name in packageNames { keys[name] = try licenseKey(for: name).publicKeyBase64 }
        let tokenURI = base + "/token"
        return PlaySimulatorSettings(
            packageNames: packageNames, licenseKeys: keys,
            serviceAccountFile: stateDirectory?.appendingPathComponent(PlayServiceAccount.fileName).path,
            serviceAccountJSON: try serviceAccount().keyFileJSON(tokenURI: tokenURI), apiURL: base, tokenURI: tokenURI)
    }

    /// The token URI assertions must name (`aud`).
    var tokenURI: String? { baseURL.map { $0 + "/token" } }

    /// Where notification pushes go when a request names no URL (`PUT /sim/play/notification-url`).
    public var pushURL: String? {
        get { store.withLock { $0.pushURL } }
        set { store.withLock { $0.pushURL = newValue } }
    }

    /// A snapshot of the counters.
    public var stats: PlaySimulatorStats { store.stats }

    /// Sets the counters back to zero.
    public func resetStats() { store.resetStats() }

    /// A stored purchase as it is now.
    public func purchase(_ token: String) -> PlaySimulatedPurchase? { store.purchase(token) }

    /// Every void recorded, oldest first.
    public var voids: [PlayVoidRecord] { store.withLock { $0.voids } }

    /// Every notification pushed, oldest first.
    public var pushes: [PlayPushRecord] { store.withLock { $0.pushes } }

    /// The OAuth 2.0 scope tokens must ask for.
    static let scope = GooglePlay.scope
}
