import Foundation
import Postgres
@testable import Reconciliation
import TestSupport
import Testing

/// A small world for one finding rule's tests (`Rules/<Kind>RuleTests.swift`): Apple's
/// transactions, uploads and ledger rows planted directly, then one run over the whole history
/// judged with the nightly SQL. Each rule's file plants its positive case and its near misses
/// (the grace period, the holds, SPEC section 5's "never flagged") and asserts the exact findings.
final class RuleWorld {
    let database: TestDatabase
    let connection: Connection
    let now = Date()
    /// Two days ago: well past the grace period.
    var old: Date { now.addingTimeInterval(-2 * 86_400) }
    static let bundle = "com.hncs.szj"
    private var nextUpload: Int64 = 1

    /// A finding as the rules leave it in `diff_findings`.
    struct Found: Hashable, CustomStringConvertible {
        var kind: FindingKind
        var transaction: String?
        var user: String?
        var description: String { "\(kind) \(transaction ?? "-") \(user ?? "-")" }
    }

    init(_ name: String) throws {
        (database, connection) = try TestDatabase.migrated("rule_\(name)")
        try connection.executeScript(
            """
            INSERT INTO reconcile.products VALUES
                ('coin42', 'consumable', 6000, 'CNY'), ('coin4886', 'consumable', 648000, 'CNY'),
                ('unlock', 'non_consumable', 12000, 'CNY');
            INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'production');
            """)
    }

    /// Apple's transaction as a verified source reported it.
    func apple(
        _ id: String, original: String? = nil, product: String = "coin42", quantity: Int = 1,
        environment: String = "Production", bundle: String = RuleWorld.bundle, refunded: Bool = false,
        token: String? = nil, purchased: Date? = nil
    ) throws {
        let purchased = purchased ?? old
        try connection.execute(
            """
            INSERT INTO reconcile.apple_transactions
                (transaction_id, original_transaction_id, product_id, bundle_id, environment, quantity,
                 purchase_date, revocation_date, app_account_token, source, signed_date)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::uuid, 'jws', $7)
            """,
            [id, original ?? id, product, bundle, environment, quantity, purchased, refunded ? purchased : nil, token])
    }

    /// An upload by `user` that claimed `claimed` (if any) and carried `carried`; `state` its
    /// verification's (`verified`, `invalid`, `pending`, `retry`).
    @discardableResult
    func upload(
        by user: String, carrying carried: [String] = [], claimed: String? = nil, username: String? = nil,
        token: String? = nil, state: String = "verified", bundle: String = RuleWorld.bundle
    ) throws -> Int64 {
        let id = nextUpload
        nextUpload += 1
        try connection.execute(
            """
            INSERT INTO reconcile.receipt_uploads
                (id, user_id, kind, payload, application_username, app_account_token, claimed_transaction_id, uploaded_at)
            VALUES ($1, $2, 'signed_transaction', 'payload', $3, $4::uuid, $5, $6)
            """, [id, user, username, token, claimed, now.addingTimeInterval(-86_400)])
        try connection.execute(
            """
            INSERT INTO reconcile.upload_verifications (upload_id, state, bundle_id, environment, first_run_id, last_run_id)
            VALUES ($1, $2, $3, 'Production', 1, 1)
            """, [id, state, bundle])
        for transaction in Set(carried + (claimed.map { [$0] } ?? [])) {
            try connection.execute(
                """
                INSERT INTO reconcile.transaction_claims
                    (transaction_id, upload_id, user_id, application_username, app_account_token, source, run_id)
                VALUES ($1, $2, $3, $4, $5::uuid, 'jws', 1)
                """,
                [transaction, id, user, claimed == transaction ? username : nil, claimed == transaction ? token : nil])
        }
        return id
    }

    /// A ledger row crediting `user`.
    func deliver(_ transaction: String, to user: String, product: String = "coin42", quantity: Int = 1, revoked: Bool = false) throws {
        try connection.execute(
            """
            INSERT INTO reconcile.deliveries (transaction_id, user_id, product_id, quantity, delivered_at, revoked_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [transaction, user, product, quantity, now.addingTimeInterval(-86_000), revoked ? now : nil])
    }

    /// The app's mapping of a purchase token to an account.
    func mapToken(_ token: String, to user: String) throws {
        try connection.execute("INSERT INTO reconcile.account_tokens VALUES ($1::uuid, $2)", [token, user])
    }

    /// What a run over the whole history finds, counting `environment`'s money.
    func findings(environment: Settings.Environment = .production) throws -> Set<Found> {
        let run = try connection.query(
            "INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), $1) RETURNING id",
            [environment.rawValue]
        )[0].decode(Int64.self, at: 0)
        try connection.execute("UPDATE reconcile.upload_verifications SET last_run_id = $1", [run])
        let differ = Differ(relations: .standard)
        return try connection.transaction {
            try differ.computeFindings(
                Differ.Parameters(
                    runID: run, bundleIDs: [Self.bundle], environment: environment,
                    judgeBefore: now.addingTimeInterval(-1800), since: nil, until: now, serverAPIEnabled: false),
                on: connection)
            return Set(try connection.query("SELECT kind, transaction_id, user_id FROM diff_findings").map { row in
                Found(
                    kind: try row.decode(FindingKind.self, "kind"), transaction: try row.decode(String?.self, "transaction_id"),
                    user: try row.decode(String?.self, "user_id"))
            })
        }
    }
}

extension RuleWorld.Found {
    init(_ kind: FindingKind, _ transaction: String?, _ user: String?) {
        self.init(kind: kind, transaction: transaction, user: user)
    }
}
