import AppStore
import AppStoreSimulator
import AppStoreTestSupport
import Crypto
import Foundation
import Logging
import Postgres
import Reconciliation
import TestSupport
import Testing

/// SPEC section 11, "bad input never stops a run", at run level: every kind of bad upload the
/// section lists, and the forged JWS of the StoreKit 2 verifier tests, stored as uploads of one
/// window among genuine simulator receipts and JWS. The run completes; each bad upload ends
/// `invalid` with its own reason; the report counts them; every good upload is judged.
@Suite("Hostile uploads in one run")
struct HostileUploadTests {
    static let bundle = "com.hncs.szj"

    /// One upload and what the run must make of it.
    struct Case: CustomStringConvertible {
        /// Unique per case: the upload is found again by it.
        var user: String
        var kind: String
        var payload: String
        /// nil: a good upload, expected `verified`.
        var code: String?
        /// The exact reason, or its start when `reasonIsPrefix`.
        var reason: String?
        var reasonIsPrefix = false
        /// Part of the reason, for reasons that quote a library's words.
        var reasonContains: String?
        /// The upload must never reach verifyReceipt.
        var askedApple: Int?
        var claimed: String?
        /// The payload is `payload` repeated this many times, built by PostgreSQL: megabytes
        /// of it are never held by this test process (whose memory other suites measure).
        var repeated: Int?
        var description: String { user }
    }

    /// A purchase a day old, so that it is judged (the grace is 30 minutes).
    static let dayAgo = Date().addingTimeInterval(-86_400)

    static func transaction(
        _ id: String, product: String = "coin42", bundle: String = Self.bundle,
        environment: AppStoreEnvironment = .production
    ) -> JWSTransaction {
        var transaction = JWSTransaction()
        transaction.transactionId = id
        transaction.originalTransactionId = id
        transaction.bundleId = bundle
        transaction.productId = product
        transaction.purchaseDate = dayAgo
        transaction.originalPurchaseDate = dayAgo
        transaction.quantity = 1
        transaction.type = .consumable
        transaction.inAppOwnershipType = .purchased
        transaction.signedDate = Date().addingTimeInterval(-60)
        transaction.environment = environment
        transaction.transactionReason = .purchase
        transaction.price = 6000
        transaction.currency = "CNY"
        return transaction
    }

    /// The whole corpus, made against `sim` (the CA the run trusts) and `expiredCA` (trusted too,
    /// so that its failure is the expiry and not the unknown root).
    static func corpus(sim: AppStoreSimulator, expiredCA: TestCertificateAuthority) throws -> [Case] {
        let ca = sim.ca
        func receipt(_ id: String, product: String = "coin42") throws -> String {
            try sim.issueReceipt(SimulatedReceipt(
                bundleID: bundle, environment: .production,
                purchases: [.init(productID: product, transactionID: id, purchaseDate: dayAgo)])).receiptData
        }
        func jws(_ transaction: JWSTransaction) throws -> String { try ca.signJWS(transaction) }
        func rawJWS(header: Data, payload: Data) throws -> String {
            try JWSText.sign(headerJSON: header, payloadJSON: payload, key: ca.leafKey)
        }
        let es256Header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": ca.x5c])
        let genuine = try jws(transaction("J-9"))
        let parts = genuine.split(separator: ".").map(String.init)
        let payloadJSON = try AppStoreJSON.encoder().encode(transaction("J-9"))

        var unknownEnums = transaction("J-3")
        unknownEnums.type = ProductType(rawValue: "Consumable Bundle")
        unknownEnums.transactionReason = TransactionReason(rawValue: "GIFT")
        unknownEnums.offerDiscountType = OfferDiscountType(rawValue: "LOYALTY")
        var nulProduct = transaction("J-NUL")
        nulProduct.productId = "coin\u{0}42"
        var richer = transaction("J-9")
        richer.quantity = 100
        var flipped = try #require(JWSText.decodeBase64URL(parts[2]))
        flipped[7] ^= 0x01
        let receiptBytes = try #require(Data(base64Encoded: try receipt("R-9")))
        let forger = try AppStoreSimulator(configuration: .init(logger: Logger(label: "forger")))
        let untrusted = try TestCertificateAuthority()

        return [
            // Genuine uploads.
            Case(user: "good-receipt", kind: "app_receipt", payload: try receipt("R-1"), askedApple: 1),
            Case(user: "good-receipt-delivered", kind: "app_receipt", payload: try receipt("R-2"), askedApple: 1),
            Case(user: "good-jws", kind: "signed_transaction", payload: try jws(transaction("J-1"))),
            Case(user: "good-jws-delivered", kind: "signed_transaction", payload: try jws(transaction("J-2"))),
            // Values Apple may add later are kept, not refused.
            Case(user: "good-unknown-enums", kind: "signed_transaction", payload: try jws(unknownEnums)),
            Case(user: "good-foreign-bundle", kind: "signed_transaction",
                 payload: try jws(transaction("J-4", bundle: "com.evil.clone")), claimed: "J-4"),

            // StoreKit 1, rejected without asking Apple.
            Case(user: "receipt-bad-base64", kind: "app_receipt", payload: "MIIT!!not*base64",
                 code: "not_a_receipt", reason: "receipt is not base64", askedApple: 0),
            Case(user: "receipt-empty", kind: "app_receipt", payload: " \n ", code: "not_a_receipt",
                 reason: "empty receipt", askedApple: 0),
            Case(user: "receipt-truncated", kind: "app_receipt",
                 payload: receiptBytes.prefix(receiptBytes.count / 2).base64EncodedString(), code: "not_a_receipt",
                 reason: "receipt is truncated: its PKCS#7 container ends before the length it announces",
                 askedApple: 0),
            // 5.6 MB of base64, under the upload limit: read, and refused by the receipt parser.
            Case(user: "receipt-oversized", kind: "app_receipt", payload: "MIIA", code: "not_a_receipt",
                 reason: "receipt too large (4194306 bytes, limit 4194304)", repeated: AppReceipt.maximumSize / 3 + 1),
            Case(user: "receipt-nul-bytes", kind: "app_receipt", payload: Data(count: 96).base64EncodedString(),
                 code: "not_a_receipt",
                 reason: "not a receipt: starts with byte 0x0, neither PKCS#7 nor a property list", askedApple: 0),
            Case(user: "receipt-invalid-utf8", kind: "app_receipt",
                 payload: Data([0xC3, 0x28, 0xA0, 0xA1, 0xE2, 0x28, 0xA1, 0xFF, 0xFE]).base64EncodedString(),
                 code: "not_a_receipt",
                 reason: "not a receipt: starts with byte 0xc3, neither PKCS#7 nor a property list", askedApple: 0),
            // StoreKit 1, rejected by Apple.
            Case(user: "receipt-forged", kind: "app_receipt",
                 payload: try forger.issueReceipt(SimulatedReceipt(
                    bundleID: bundle, environment: .production,
                    purchases: [.init(productID: "coin4886", transactionID: "R-F", purchaseDate: dayAgo)])).receiptData,
                 code: "apple_21003", reason: "21003: the receipt could not be authenticated", askedApple: 1),
            // Apple (the simulator) confirms it, but PostgreSQL text cannot hold what it says.
            Case(user: "receipt-nul-product", kind: "app_receipt", payload: try receipt("R-NUL", product: "coin\u{0}42"),
                 code: "nul_character",
                 reason: "Apple's data holds a NUL character in product_id of transaction R-NUL; "
                    + "PostgreSQL text cannot store it", askedApple: 1),

            // Too large to read at all, whatever the kind.
            Case(user: "huge-receipt", kind: "app_receipt", payload: "A", code: "payload_too_large",
                 reason: "payload is 7340032 bytes, over the 6291456-byte limit for an upload: rejected unread",
                 repeated: 7 << 20),
            Case(user: "huge-jws", kind: "signed_transaction", payload: "e30.", code: "payload_too_large",
                 reason: "payload is 6291460 bytes, over the 6291456-byte limit for an upload: rejected unread",
                 repeated: (6 << 20) / 4 + 1),
            Case(user: "unknown-kind", kind: "play_store_token", payload: "opaque", code: "unknown_kind",
                 reason: #"upload kind "play_store_token" is none of app_receipt, signed_transaction, play_purchase"#),

            // StoreKit 2.
            Case(user: "jws-bad-base64", kind: "signed_transaction", payload: "eyJ!!!.e30.c2ln", code: "jws_malformed",
                 reason: "malformed JWS: header is not base64url"),
            Case(user: "jws-truncated", kind: "signed_transaction",
                 payload: parts[0] + "." + parts[1].prefix(parts[1].count / 2), code: "jws_malformed",
                 reason: "malformed JWS: expected 3 dot-separated segments, found 2"),
            Case(user: "jws-cut-signature", kind: "signed_transaction", payload: String(genuine.dropLast(10)),
                 code: "jws_bad_signature", reason: "ES256 signature does not verify"),
            Case(user: "jws-oversized", kind: "signed_transaction",
                 payload: parts[0] + "." + parts[1] + String(repeating: "A", count: 1 << 20) + "." + parts[2],
                 code: "jws_too_large",
                 reason: "JWS too large (\(genuine.utf8.count + (1 << 20)) bytes, limit 1048576)"),
            Case(user: "jws-alg-none", kind: "signed_transaction",
                 payload: JWSText.base64URL(try JSONSerialization.data(withJSONObject: ["alg": "none", "x5c": ca.x5c]))
                    + "." + parts[1] + ".",
                 code: "jws_unsupported_algorithm", reason: #"unsupported JWS algorithm "none" (only ES256 is accepted)"#,
                 claimed: "J-FORGED"),
            Case(user: "jws-hs256", kind: "signed_transaction", payload: try hs256(payloadJSON, ca: ca),
                 code: "jws_unsupported_algorithm", reason: #"unsupported JWS algorithm "HS256" (only ES256 is accepted)"#),
            Case(user: "jws-unknown-root", kind: "signed_transaction", payload: try untrusted.sign(transaction("J-5")),
                 code: "jws_untrusted_chain", reason: "certificate chain not trusted: ", reasonIsPrefix: true),
            Case(user: "jws-expired", kind: "signed_transaction", payload: try expiredCA.sign(transaction("J-6")),
                 code: "jws_untrusted_chain", reason: "certificate chain not trusted: ", reasonIsPrefix: true,
                 reasonContains: "expired"),
            Case(user: "jws-leaf-without-oid", kind: "signed_transaction",
                 payload: try TestCertificateAuthority(.init(leafHasAppleOID: false)).sign(transaction("J-7")),
                 code: "jws_leaf_oid", reason: "leaf certificate lacks Apple OID 1.2.840.113635.100.6.11.1"),
            Case(user: "jws-intermediate-without-oid", kind: "signed_transaction",
                 payload: try TestCertificateAuthority(.init(intermediateHasAppleOID: false)).sign(transaction("J-8")),
                 code: "jws_intermediate_oid",
                 reason: "intermediate certificate lacks Apple OID 1.2.840.113635.100.6.2.1"),
            Case(user: "jws-leaf-signed-by-root", kind: "signed_transaction",
                 payload: try TestCertificateAuthority(.init(leafSignedByRoot: true)).sign(transaction("J-10")),
                 code: "jws_untrusted_chain", reason: "certificate chain not trusted: ", reasonIsPrefix: true),
            Case(user: "jws-two-certificates", kind: "signed_transaction",
                 payload: try rawJWS(
                    header: JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": Array(ca.x5c.prefix(2))]),
                    payload: payloadJSON),
                 code: "jws_x5c_count", reason: "x5c holds 2 certificates, expected 3"),
            Case(user: "jws-no-x5c", kind: "signed_transaction",
                 payload: try rawJWS(header: JSONSerialization.data(withJSONObject: ["alg": "ES256"]), payload: payloadJSON),
                 code: "jws_missing_x5c", reason: "JWS header has no x5c certificate chain"),
            Case(user: "jws-garbage-certificate", kind: "signed_transaction",
                 payload: try rawJWS(
                    header: JSONSerialization.data(withJSONObject: [
                        "alg": "ES256", "x5c": ["TUlJQmFk", ca.x5c[1], ca.x5c[2]],
                    ]),
                    payload: payloadJSON),
                 code: "jws_bad_certificate", reason: "x5c certificate unreadable: leaf: ", reasonIsPrefix: true),
            Case(user: "jws-flipped-signature", kind: "signed_transaction",
                 payload: parts[0] + "." + parts[1] + "." + JWSText.base64URL(flipped), code: "jws_bad_signature",
                 reason: "ES256 signature does not verify"),
            Case(user: "jws-edited-payload", kind: "signed_transaction",
                 payload: parts[0] + "." + JWSText.base64URL(try AppStoreJSON.encoder().encode(richer)) + "." + parts[2],
                 code: "jws_bad_signature", reason: "ES256 signature does not verify"),
            Case(user: "jws-unknown-environment", kind: "signed_transaction",
                 payload: try jws(transaction("J-11", environment: AppStoreEnvironment(rawValue: "Staging"))),
                 code: "jws_environment", reason: "environment Staging not accepted"),
            Case(user: "jws-xcode", kind: "signed_transaction", payload: try jws(transaction("J-12", environment: .xcode)),
                 code: "jws_environment", reason: "environment Xcode not accepted"),
            Case(user: "jws-not-a-transaction", kind: "signed_transaction",
                 payload: try rawJWS(header: es256Header, payload: Data(#"{"quantity":"many"}"#.utf8)),
                 code: "jws_undecodable_payload", reason: "payload undecodable: quantity: ", reasonIsPrefix: true),
            Case(user: "jws-nul-in-header", kind: "signed_transaction",
                 payload: try rawJWS(header: Data(#"{"alg":"ES256","x5c":[]}"#.utf8) + Data([0]), payload: payloadJSON),
                 code: "jws_malformed", reason: "malformed JWS: header is not a JSON object of the expected shape"),
            Case(user: "jws-invalid-utf8-header", kind: "signed_transaction",
                 payload: try rawJWS(header: Data([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D]), payload: payloadJSON),
                 code: "jws_malformed", reason: "malformed JWS: header is not a JSON object of the expected shape"),
            Case(user: "jws-invalid-utf8-payload", kind: "signed_transaction",
                 payload: try rawJWS(header: es256Header, payload: Data([0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D])),
                 code: "jws_undecodable_payload", reason: "payload undecodable: ", reasonIsPrefix: true),
            Case(user: "jws-nul-product", kind: "signed_transaction", payload: try jws(nulProduct), code: "nul_character",
                 reason: "Apple's data holds a NUL character in product_id of transaction J-NUL; "
                    + "PostgreSQL text cannot store it"),
        ]
    }

    /// HS256 keyed with the leaf's public key: the classic algorithm-confusion forgery.
    static func hs256(_ payloadJSON: Data, ca: SimulatorCA) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "HS256", "x5c": ca.x5c])
        let signingInput = JWSText.base64URL(header) + "." + JWSText.base64URL(payloadJSON)
        let secret = SymmetricKey(data: Data(ca.leafKey.publicKey.pemRepresentation.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: secret)
        return signingInput + "." + JWSText.base64URL(Data(mac))
    }

    @Test func everyBadUploadIsInvalidWithItsReasonAndEveryGoodOneIsJudged() async throws {
        let (database, connection) = try TestDatabase.migrated("hostile")
        var simLogger = Logger(label: "sim")
        simLogger.logLevel = .critical
        let sim = try AppStoreSimulator(configuration: .init(logger: simLogger))
        // Valid until a day before the JWS were signed: the chain is trusted, the leaf expired.
        let expiredCA = try TestCertificateAuthority(.init(
            notValidBefore: Date().addingTimeInterval(-30 * 86_400), leafNotValidAfter: Date().addingTimeInterval(-86_400)))
        let cases = try Self.corpus(sim: sim, expiredCA: expiredCA)
        #expect(Set(cases.map(\.user)).count == cases.count)

        for item in cases {
            try connection.execute(
                """
                INSERT INTO reconcile.receipt_uploads (user_id, kind, payload, claimed_transaction_id, uploaded_at)
                VALUES ($1, $2, repeat($3, $5::integer), $4, now() - interval '20 hours')
                """, [item.user, item.kind, item.payload, item.claimed, item.repeated ?? 1])
        }
        try connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, delivered_at) VALUES
                ('R-2', 'good-receipt-delivered', 'coin42', now() - interval '20 hours'),
                ('J-2', 'good-jws-delivered', 'coin42', now() - interval '20 hours'),
                ('J-FORGED', 'jws-alg-none', 'coin4886', now() - interval '20 hours')
            """)

        let reports = Scratch.root.appendingPathComponent("hostile-\(UUID().uuidString)")
        let report = try await sim.withRunning { running in
            let settings = try Settings(lookup: [
                "DATABASE_URL": database.url, "RECONCILE_BUNDLE_IDS": Self.bundle,
                "APPLE_VERIFY_RECEIPT_URL": running.productionURL, "APPLE_VERIFY_RECEIPT_SANDBOX_URL": running.sandboxURL,
                "RECONCILE_REPORT_DIR": reports.path, "RECONCILE_CONCURRENCY": "4",
            ].lookup)
            let quiet = Logger(label: "hostile", factory: { _ in SwiftLogNoOpLogHandler() })
            let client = VerifyReceiptClient.Configuration(
                productionURL: running.productionURL, sandboxURL: running.sandboxURL,
                retry: .init(maxAttempts: 2, initialBackoff: .milliseconds(10)), maxConcurrentRequests: 4)
            return try await VerifyReceiptClient.withClient(configuration: client) { client in
                let verifier = AppleUploadVerifier(
                    receiptClient: client, roots: TrustedRoots([sim.ca.root, expiredCA.root]),
                    bundleIDs: [Self.bundle], logger: quiet)
                return try await ReconciliationJob(settings: settings, verifier: verifier, logger: quiet)
                    .run(.init(since: Date().addingTimeInterval(-3 * 86_400)))
            }
        }

        #expect(report.status == "completed")
        let bad = cases.filter { $0.code != nil }
        #expect(report.verification.uploads == cases.count)
        #expect(report.verification.verified == cases.count - bad.count)
        #expect(report.verification.invalid == bad.count)
        #expect(report.verification.retry == 0)
        #expect(report.verification.byAppleStatus == ["0": 3, "21003": 1])

        let rows = try connection.query(
            """
            SELECT u.user_id, v.state, v.error_code, v.last_error
              FROM reconcile.receipt_uploads u JOIN reconcile.upload_verifications v ON v.upload_id = u.id
            """)
        var outcomes: [String: (state: String, code: String?, reason: String?)] = [:]
        for row in rows {
            outcomes[try row.decode(String.self, at: 0)] = (
                try row.decode(String.self, at: 1), try row.decode(String?.self, at: 2), try row.decode(String?.self, at: 3))
        }
        let requests = sim.state.receiptRequests
        // Only the two good receipts, the forged one and the one holding a NUL reached verifyReceipt.
        #expect(sim.state.stats.verifyReceiptRequests == 4)
        for item in cases {
            let outcome = try #require(outcomes[item.user], "\(item) was not verified")
            if let askedApple = item.askedApple {
                #expect(requests.total(item.payload) == askedApple, "\(item): verifyReceipt requests")
            }
            guard let code = item.code else {
                #expect(outcome.state == "verified", "\(item): \(outcome)")
                continue
            }
            #expect(outcome.state == "invalid", "\(item): \(outcome)")
            #expect(outcome.code == code, "\(item): \(outcome)")
            let reason = outcome.reason ?? ""
            if item.reasonIsPrefix {
                #expect(reason.hasPrefix(item.reason ?? ""), "\(item): \(reason)")
            } else {
                #expect(reason == item.reason, "\(item): \(reason)")
            }
            if let part = item.reasonContains {
                #expect(reason.contains(part), "\(item): \(reason)")
            }
        }

        let found = try Set(report.findings.map { "\($0.kind.rawValue) \($0.transactionID ?? "-") \($0.userID ?? "-")" })
        #expect(found == [
            "missed_delivery R-1 good-receipt",
            "missed_delivery J-1 good-jws",
            "missed_delivery J-3 good-unknown-enums",
            "foreign_bundle J-4 good-foreign-bundle",
            "unverified_delivery J-FORGED jws-alg-none",
        ])
        let stored = try connection.query(
            "SELECT product_type FROM reconcile.apple_transactions WHERE transaction_id = 'J-3'")
        #expect(try stored.first?.decode(String?.self, at: 0) == "Consumable Bundle")

        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: reports.appendingPathComponent("run-\(report.runID)/report.json"))) as! [String: Any]
        let verification = try #require(json["verification"] as? [String: Any])
        #expect(verification["invalid"] as? Int == bad.count)
        #expect(verification["verified"] as? Int == cases.count - bad.count)
        #expect(verification["retry"] as? Int == 0)
    }
}
