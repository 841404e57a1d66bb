import Postgres
import Reconciliation
import TestSupport
import Testing

/// Migration 0006: who gets the goods and who loses them, stored with each review item and
/// backfilled from the evidence of the items made before it.
@Suite("Migration 0006: the action's accounts on review items")
struct ReviewItemActionMigrationTests {
    static let evidence = """
        {"apple_transaction": {"transaction_id": "t1", "product_id": "coin42", "quantity": 3},
         "deliveries": [{"id": 1, "user_id": "u5", "product_id": "coin42", "quantity": 1, "revoked_at": null},
                        {"id": 2, "user_id": "u6", "product_id": "coin7", "quantity": 2, "revoked_at": null},
                        {"id": 3, "user_id": "u4", "product_id": "coin42", "quantity": 1, "revoked_at": "2026-01-01T00:00:00+00:00"}],
         "uploads": [], "buyer": {"user_id": "u4", "basis": "app_account_token", "uploaders": 1}}
        """

    @Test func itemsMadeBeforeTheMigrationAreBackfilledFromTheirEvidence() throws {
        let database = try TestDatabase.create("migration_0006")
        let connection = try database.connect()
        let migrations = try Schema.migrations()
        _ = try Migrator(schema: Schema.name, lockKey: Schema.LockKey.migrate)
            .apply(migrations.filter { $0.version < 6 }, on: connection)
        try connection.execute("INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'production')")
        // A wrong_account item names the account its wrong delivery credited only in its fingerprint.
        try connection.execute(
            """
            INSERT INTO reconcile.review_items
                (fingerprint, kind, severity, transaction_id, user_id, suggested_action, evidence, first_seen_run, last_seen_run)
            VALUES ('wrong_account:t1:' || md5('u6'), 'wrong_account', 'high', 't1', 'u4', 'move', $1::jsonb, 1, 1),
                   ('refunded_delivery:t1', 'refunded_delivery', 'medium', 't1', 'u5', 'revoke', $1::jsonb, 1, 1),
                   ('missed_delivery:t2', 'missed_delivery', 'high', 't2', 'u9', 'grant', '{}', 1, 1)
            """, [Self.evidence])

        _ = try Schema.migrate(connection)

        let rows = try connection.query(
            """
            SELECT kind, grant_to_user_id, grant_product_id, grant_quantity, revoke_from_user_id, revoke_product_id,
                   revoke_quantity
              FROM reconcile.review_items ORDER BY id
            """)
        func columns(_ row: Row) throws -> [String?] {
            try ["grant_to_user_id", "grant_product_id", "revoke_from_user_id", "revoke_product_id"]
                .map { try row.decode(String?.self, $0) }
                + ["grant_quantity", "revoke_quantity"].map { try row.decode(Int?.self, $0).map(String.init) }
        }
        // Moved from u6 (the md5 in the fingerprint) to the buyer u4.
        #expect(try columns(rows[0]) == ["u4", "coin42", "u6", "coin7", "3", "2"])
        // Revoked from the item's account; the already revoked delivery is not taken twice.
        #expect(try columns(rows[1]) == ["u4", "coin42", "u5", "coin42", "3", "1"])
        // No evidence: the item's own account is the buyer of a missed delivery, nothing to revoke.
        #expect(try columns(rows[2]) == ["u9", nil, nil, nil, nil, nil])
    }
}
