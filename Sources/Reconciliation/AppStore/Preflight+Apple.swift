import AppStore
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore

extension Preflight {
    /// The Apple side of `reconcile check`: roots, the Server API key, and each configured
    /// endpoint answering like Apple's. Never throws.
    public static func apple(_ settings: Settings) async -> [CheckResult] {
        var results: [CheckResult] = []
        do {
            let roots = try AppleServices.roots(settings)
            let source = settings.rootCertificateFiles.isEmpty ? "bundled Apple roots" : "APPLE_ROOT_CERTIFICATES"
            results.append(CheckResult("roots", passed: true, "\(roots.certificates.count) trusted roots (\(source))"))
        } catch {
            results.append(CheckResult("roots", passed: false, "\(error)"))
        }
        if let key = settings.serverAPIKey {
            results.append(checkKey(key))
        } else {
            results.append(CheckResult(
                "server api key", passed: true,
                "not configured: purchases never uploaded are not looked up (set APPSTORE_KEY_ID, APPSTORE_ISSUER_ID, "
                    + "APPSTORE_PRIVATE_KEY_FILE)"))
        }
        if settings.receiptVerification == .apple {
            for (name, url) in [("verifyReceipt", settings.verifyReceiptURL),
                                ("verifyReceipt sandbox", settings.verifyReceiptSandboxURL)] {
                results.append(await checkVerifyReceipt(name: name, url: url))
            }
        }
        return results
    }

    /// Whether the Server API key file is a readable P-256 PEM key.
    public static func checkKey(_ key: Settings.ServerAPIKey) -> CheckResult {
        guard let data = FileManager.default.contents(atPath: key.privateKeyFile) else {
            return CheckResult(
                "server api key", passed: false,
                "cannot read APPSTORE_PRIVATE_KEY_FILE \(key.privateKeyFile): check the path and the job's permissions")
        }
        do {
            _ = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
            return CheckResult("server api key", passed: true, "key \(key.keyID) is a P-256 private key")
        } catch {
            return CheckResult(
                "server api key", passed: false,
                "APPSTORE_PRIVATE_KEY_FILE is not a PEM P-256 private key (the .p8 file App Store Connect gives)")
        }
    }

    /// An empty POST: Apple answers HTTP 200 with a JSON `status` (21000 or 21002) when it is there.
    static func checkVerifyReceipt(name: String, url: String) async -> CheckResult {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: "{}"))
        do {
            // The whole answer within 10 s: an endpoint that stalls after its head fails the check.
            let answer = try await HTTPExchange.exchange(request, within: .seconds(10), upTo: 1 << 20, http: .shared)
            let json = try? JSONSerialization.jsonObject(with: Data(answer.body.readableBytesView)) as? [String: Any]
            guard answer.status == 200, let status = json?["status"] else {
                return CheckResult(name, passed: false, "\(url) answered HTTP \(answer.status) without a status")
            }
            return CheckResult(name, passed: true, "\(url) answers (status \(status) for an empty request)")
        } catch {
            return CheckResult(name, passed: false, "\(url) unreachable: \(error)")
        }
    }
}
