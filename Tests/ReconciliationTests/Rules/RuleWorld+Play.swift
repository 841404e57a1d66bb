import Foundation
import Postgres
@testable import Reconciliation

/// Google Play in a rule world (SPEC section 18): Play's orders as a verified purchase or the
/// Developer API reported them, in the one white table with `store` google_play, and Play uploads.
extension RuleWorld {
    static let package = "com.hncs.szj.android"

    /// A finding with what SPEC section 18 adds: its store and fingerprint.
    struct StoreFound: Hashable, CustomStringConvertible {
        var kind: FindingKind
        var transaction: String?
        var user: String?
        var store: Store
        var description: String { "\(store) \(kind) \(transaction ?? "-") \(user ?? "-")" }
    }

    /// A Play order: `id` its order id (`GPA.…`), `binding` the purchase's obfuscatedAccountId,
    /// `test` a licence tester's purchase (stored as Sandbox), `refundedUnits` a partial refund.
    func play(
        _ id: String, product: String = "coin42", quantity: Int = 1, package: String = RuleWorld.package,
        binding: String? = nil, test: Bool = false, voided: Bool = false, refundedUnits: Int? = nil,
        pending: Bool = false, token: String? = nil
    ) throws {
        let original = id.range(of: #"\.\.\d+$"#, options: .regularExpression).map { String(id[..<$0.lowerBound]) } ?? id
        try connection.execute(
            """
            INSERT INTO reconcile.apple_transactions
                (transaction_id, original_transaction_id, product_id, bundle_id, environment, quantity,
                 purchase_date, revocation_date, source, signed_date, store, obfuscated_account_id,
                 purchase_token, refunded_quantity, pending)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'play_purchase', $7, 'google_play', $9, $10, $11, $12)
            """,
            [id, original, product, package, test ? "Sandbox" : "Production", quantity, old,
             voided || refundedUnits != nil ? old : nil, binding, token ?? "token-\(id)", refundedUnits, pending])
    }

    /// A Play upload by `user` carrying `order` (its claim's username: the purchase's binding).
    @discardableResult
    func playUpload(
        by user: String, carrying order: String?, binding: String? = nil, package: String = RuleWorld.package,
        state: String = "verified"
    ) throws -> Int64 {
        let id = try upload(by: user, carrying: [], state: state, bundle: package)
        try connection.execute(
            "UPDATE reconcile.receipt_uploads SET kind = 'play_purchase', claimed_transaction_id = $2 WHERE id = $1",
            [id, order])
        try connection.execute("UPDATE reconcile.upload_verifications SET store = 'google_play' WHERE upload_id = $1", [id])
        if let order {
            try connection.execute(
                """
                INSERT INTO reconcile.transaction_claims
                    (transaction_id, upload_id, user_id, application_username, source, run_id)
                VALUES ($1, $2, $3, $4, 'play_purchase', 1)
                """, [order, id, user, binding])
        }
        return id
    }

    /// What a run over the whole history finds with Play on (`packages`) or off (empty).
    func storeFindings(packages: [String] = [RuleWorld.package], environment: Settings.Environment = .production)
        throws -> (found: Set<StoreFound>, fingerprints: [String], revokedUnits: [String: Int])
    {
        let run = try connection.query(
            "INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), $1) RETURNING id",
            [environment.rawValue]
        )[0].decode(Int64.self, at: 0)
        try connection.execute("UPDATE reconcile.upload_verifications SET last_run_id = $1", [run])
        let differ = Differ(relations: .standard)
        return try connection.transaction {
            var parameters = Differ.Parameters(
                runID: run, bundleIDs: [Self.bundle], environment: environment,
                judgeBefore: now.addingTimeInterval(-1800), since: nil, until: now, serverAPIEnabled: false)
            parameters.packageNames = packages
            try differ.computeFindings(parameters, on: connection)
            let rows = try connection.query(
                "SELECT kind, transaction_id, user_id, store, fingerprint, revoke_quantity FROM diff_findings")
            let found = Set(try rows.map { row in
                StoreFound(
                    kind: try row.decode(FindingKind.self, "kind"),
                    transaction: try row.decode(String?.self, "transaction_id"),
                    user: try row.decode(String?.self, "user_id"), store: try row.decode(Store.self, "store"))
            })
            var revoked: [String: Int] = [:]
            for row in rows {
                if let id = try row.decode(String?.self, "transaction_id"), let units = try row.decode(Int?.self, "revoke_quantity") {
                    revoked[id] = units
                }
            }
            return (found, try rows.map { try $0.decode(String.self, "fingerprint") }, revoked)
        }
    }
}
