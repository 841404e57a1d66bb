import Postgres
import Reconciliation
import TestSupport
import Testing

@Suite("Schema migrations")
struct SchemaTests {
    /// Every table and column SPEC section 2 and 6 name: the contract outside checks drive.
    static let contract: [String: [String]] = [
        "receipt_uploads": [
            "id", "user_id", "kind", "payload", "application_username", "app_account_token",
            "claimed_transaction_id", "device", "uploaded_at",
        ],
        "deliveries": ["id", "transaction_id", "user_id", "product_id", "quantity", "delivered_at", "revoked_at"],
        "products": ["product_id", "product_type", "price_milli", "currency"],
        "account_tokens": ["app_account_token", "user_id"],
        "notifications": ["id", "signed_payload", "received_at"],
        "runs": ["id", "status", "window_since", "window_until", "started_at", "finished_at", "report_dir", "counts"],
        "upload_verifications": [
            "upload_id", "state", "apple_status", "error_code", "environment", "bundle_id", "attempts", "last_error",
            "next_attempt_at",
        ],
        "apple_transactions": [
            "transaction_id", "original_transaction_id", "product_id", "product_type", "bundle_id", "environment",
            "quantity", "purchase_date", "revocation_date", "revocation_reason", "ownership_type", "app_account_token",
            "web_order_line_item_id", "price_milli", "currency", "storefront", "source", "first_seen_run",
            "last_seen_run", "signed_date",
        ],
        "transaction_claims": ["transaction_id", "upload_id", "user_id"],
        "review_items": [
            "id", "fingerprint", "kind", "severity", "status", "transaction_id", "original_transaction_id", "user_id",
            "product_id", "suggested_action", "evidence", "first_seen_run", "last_seen_run", "created_at", "updated_at",
            "assignee", "resolution", "resolved_by", "resolved_at", "note",
        ],
        "review_events": ["id", "review_item_id", "actor", "from_status", "to_status", "note", "created_at"],
        "action_outbox": ["id", "review_item_id", "action"],
        "schema_migrations": ["version", "name", "checksum", "applied_at"],
    ]

    @Test func createsEveryTableAndColumnOfTheContract() throws {
        let database = try TestDatabase.create("schema_contract")
        let connection = try database.connect()
        let outcome = try Schema.migrate(connection)
        #expect(outcome.applied == (try Schema.migrations().map(\.name)))
        let rows = try connection.query(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'reconcile'")
        var present: [String: Set<String>] = [:]
        for row in rows { present[try row.decode(String.self, at: 0), default: []].insert(try row.decode(String.self, at: 1)) }
        for (table, columns) in Self.contract {
            let missing = Set(columns).subtracting(present[table] ?? [])
            #expect(missing.isEmpty, "reconcile.\(table) lacks \(missing.sorted())")
        }
    }

    @Test func migratingTwiceIsANoOp() throws {
        let (_, connection) = try TestDatabase.migrated("schema_twice")
        let again = try Schema.migrate(connection)
        #expect(again.applied.isEmpty)
        #expect(again.alreadyApplied.count == (try Schema.migrations().count))
    }

    @Test func reviewEventsAreAppendOnly() throws {
        let (_, connection) = try TestDatabase.migrated("schema_events")
        try connection.execute("INSERT INTO reconcile.runs (window_until, environment) VALUES (now(), 'production')")
        try connection.execute(
            """
            INSERT INTO reconcile.review_items (fingerprint, kind, severity, suggested_action, first_seen_run, last_seen_run)
            VALUES ('f', 'missed_delivery', 'high', 'grant', 1, 1)
            """)
        try connection.execute("INSERT INTO reconcile.review_events (review_item_id, actor, to_status) VALUES (1, 'reconcile', 'open')")
        #expect(throws: PostgresError.self) { try connection.execute("UPDATE reconcile.review_events SET note = 'x'") }
        #expect(throws: PostgresError.self) { try connection.execute("DELETE FROM reconcile.review_events") }
    }

    /// `reconcile.account_hash` is the hex SHA-256 of the account's UTF-8, and a claim records
    /// whether its applicationUsername names its own uploader, verbatim or hashed in any case.
    @Test(arguments: [
        ("u6", "u6", true), ("u6", "71ea5f5b962198c5d0532765e7e92cdd0519456bb3d735297e535dcab17bf84d", true),
        ("u6", "71EA5F5B962198C5D0532765E7E92CDD0519456BB3D735297E535DCAB17BF84D", true),
        ("u7", "71ea5f5b962198c5d0532765e7e92cdd0519456bb3d735297e535dcab17bf84d", false),
        ("用户-🎉", "用户-🎉", true), ("u6", "U6", false),
    ])
    func aClaimKnowsWhetherItsUsernameNamesItsUploader(user: String, username: String, names: Bool) throws {
        let (_, connection) = try TestDatabase.migrated("schema_account_hash")
        let sameHash = try connection.query(
            "SELECT reconcile.account_hash($1) = encode(sha256(convert_to($1, 'UTF8')), 'hex')", [user]
        )[0].decode(Bool.self, at: 0)
        #expect(sameHash)
        try connection.execute(
            """
            INSERT INTO reconcile.transaction_claims (transaction_id, upload_id, user_id, application_username, source)
            VALUES ('t1', 1, $1, $2, 'jws'), ('t1', 2, $1, NULL, 'jws')
            """, [user, username])
        let rows = try connection.query(
            "SELECT username_names_uploader FROM reconcile.transaction_claims WHERE transaction_id = 't1' ORDER BY upload_id")
        let withUsername = try rows[0].decode(Bool?.self, at: 0)
        let withoutUsername = try rows[1].decode(Bool?.self, at: 0)
        #expect(withUsername == names)
        #expect(withoutUsername == nil)
    }

    @Test func migrationsShipInsideTheBinaryInOrder() throws {
        let migrations = try Schema.migrations()
        let versions = migrations.map(\.version)
        #expect(versions == Array(1...migrations.count))
        #expect(Schema.latestVersion == versions.last)
        #expect(migrations.allSatisfy { $0.sql.contains("reconcile.") })
    }
}
