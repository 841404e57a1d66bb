import Foundation
import Postgres

/// A small review queue planted directly in `reconcile.review_items`, one item per situation the
/// review tests need, with evidence shaped like the differ's. Needs the schema migrated.
public enum ReviewFixtures {
    /// The user id that tries to run script in the pages.
    public static let hostileUser = "<script>alert(1)</script>"
    /// The product id that tries to break out of an attribute.
    public static let hostileProduct = "\"><img src=x onerror=alert(2)>"

    /// Plants the items; returns their ids by transaction id.
    @discardableResult
    public static func seed(on connection: Connection) throws -> [String: Int64] {
        let run = try connection.query(
            "INSERT INTO reconcile.runs (window_until, environment, status) VALUES (now(), 'production', 'completed') RETURNING id"
        )[0].decode(Int64.self, at: 0)
        func apple(_ id: String, _ product: String, quantity: Int = 1) -> String {
            """
            {"transaction_id": "\(id)", "original_transaction_id": "\(id)", "product_id": \(json(product)),
             "quantity": \(quantity), "purchase_date": "2026-11-20T08:15:00+00:00", "environment": "Production",
             "bundle_id": "com.example.game", "price_milli": 6000, "currency": "CNY"}
            """
        }
        func delivery(_ id: Int, _ transaction: String, _ user: String, _ product: String, quantity: Int = 1) -> String {
            """
            {"id": \(id), "transaction_id": "\(transaction)", "user_id": \(json(user)), "product_id": \(json(product)),
             "quantity": \(quantity), "delivered_at": "2026-11-20T08:16:00+00:00", "revoked_at": null}
            """
        }
        func upload(_ id: Int, _ user: String) -> String {
            """
            {"id": \(id), "user_id": \(json(user)), "kind": "signed_transaction", "uploaded_at": "2026-11-20T08:15:30+00:00",
             "device": {"model": "iPhone14,5", "os_version": "17.2", "app_version": "3.1"}, "verification": "verified",
             "apple_status": null, "error": null}
            """
        }
        func buyer(_ user: String?) -> String {
            "{\"user_id\": \(user.map(json) ?? "null"), \"basis\": \(user == nil ? "null" : "\"uploader\""), \"uploaders\": \(user == nil ? 2 : 1)}"
        }
        // (kind, transaction, user, product, status, fingerprint suffix, evidence)
        let items: [(String, String, String?, String, String, String?, String)] = [
            ("missed_delivery", "t-m1", "u1", "coin42", "open", nil,
             "{\"apple_transaction\": \(apple("t-m1", "coin42")), \"deliveries\": [], \"uploads\": [\(upload(1, "u1"))], \"buyer\": \(buyer("u1"))}"),
            ("duplicate_delivery", "t-d1", "u3", "coin42", "open", nil,
             "{\"apple_transaction\": \(apple("t-d1", "coin42")), \"deliveries\": [\(delivery(10, "t-d1", "u3", "coin42")), \(delivery(11, "t-d1", "u3", "coin42"))], \"uploads\": [\(upload(2, "u3"))], \"buyer\": \(buyer("u3"))}"),
            ("wrong_account", "t-w1", "u4", "coin42", "open", "md5:u5",
             "{\"apple_transaction\": \(apple("t-w1", "coin42")), \"deliveries\": [\(delivery(12, "t-w1", "u5", "coin42"))], \"uploads\": [\(upload(3, "u5"))], \"buyer\": \(buyer("u4"))}"),
            ("refunded_delivery", "t-r1", "u1", "vip_month", "open", nil,
             "{\"apple_transaction\": \(apple("t-r1", "vip_month")), \"deliveries\": [\(delivery(13, "t-r1", "u1", "vip_month"))], \"uploads\": [\(upload(4, "u1"))], \"buyer\": \(buyer("u1"))}"),
            ("shared_receipt", "t-s1", nil, "coin42", "open", nil,
             "{\"apple_transaction\": \(apple("t-s1", "coin42")), \"deliveries\": [], \"uploads\": [\(upload(5, "u10")), \(upload(6, "u11"))], \"buyer\": \(buyer(nil))}"),
            ("missed_delivery", "t-x1", hostileUser, hostileProduct, "open", nil,
             "{\"apple_transaction\": \(apple("t-x1", hostileProduct)), \"deliveries\": [], \"uploads\": [\(upload(7, hostileUser))], \"buyer\": \(buyer(hostileUser))}"),
            ("unverified_delivery", "t-u1", "u8", "coin4886", "open", nil,
             "{\"apple_transaction\": null, \"deliveries\": [\(delivery(14, "t-u1", "u8", "coin4886"))], \"uploads\": [], \"buyer\": null}"),
            ("missed_delivery", "t-a1", "u2", "coin42", "auto_resolved", nil,
             "{\"apple_transaction\": \(apple("t-a1", "coin42")), \"deliveries\": [], \"uploads\": [], \"buyer\": \(buyer("u2"))}"),
        ]
        var ids: [String: Int64] = [:]
        for (kind, transaction, user, product, status, suffix, evidence) in items {
            let severity = ["missed_delivery": "high", "wrong_account": "high", "unverified_delivery": "high"][kind] ?? "medium"
            let action = ["missed_delivery": "grant", "duplicate_delivery": "revoke", "refunded_delivery": "revoke",
                          "wrong_account": "move"][kind] ?? "investigate"
            let id = try connection.query(
                """
                INSERT INTO reconcile.review_items
                    (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
                     suggested_action, evidence, first_seen_run, last_seen_run)
                VALUES ($1 || ':' || $2 || CASE WHEN $3::text IS NULL THEN '' ELSE ':' || md5(substr($3::text, 5)) END,
                        $1, $4, $5, $2, $2, $6, $7, $8, $9::jsonb, $10, $10)
                RETURNING id
                """, [kind, transaction, suffix, severity, status, user, product, action, evidence, run]
            )[0].decode(Int64.self, at: 0)
            try connection.execute(
                """
                INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
                VALUES ($1, $2, 'reconcile', NULL, 'open', 'detected')
                """, [id, run])
            ids[transaction] = id
        }
        try connection.executeScript(String(contentsOf: plantedItemActions, encoding: .utf8))
        return ids
    }

    /// Google Play's order id of ``seedPlay(on:)``'s item.
    public static let playOrder = "GPA.3391-2207-4310-55201"

    /// Plants one Google Play item (SPEC section 18) beside ``seed(on:)``'s App Store ones: a
    /// `missed_delivery` of the order ``playOrder`` to account `a1`, worth 6.00 CNY, with what a
    /// grant gives; its fingerprint marked as Play's, as sql/diff/60_findings_store.sql does. Needs
    /// a run (``seed(on:)`` writes one). Returns its id.
    @discardableResult
    public static func seedPlay(on connection: Connection) throws -> Int64 {
        let evidence = """
            {"apple_transaction": {"transaction_id": "\(playOrder)", "original_transaction_id": "\(playOrder)",
             "product_id": "coin42", "quantity": 1, "purchase_date": "2026-11-20T08:15:00+00:00",
             "environment": "Production", "bundle_id": "com.example.game", "price_milli": 6000, "currency": "CNY"},
             "deliveries": [], "uploads": [], "buyer": {"user_id": "a1", "basis": "uploader", "uploaders": 1}}
            """
        let id = try connection.query(
            """
            INSERT INTO reconcile.review_items
                (fingerprint, kind, severity, status, transaction_id, original_transaction_id, user_id, product_id,
                 suggested_action, evidence, first_seen_run, last_seen_run, amount_milli, currency, store,
                 grant_to_user_id, grant_product_id, grant_quantity)
            SELECT 'google_play/missed_delivery:' || $1, 'missed_delivery', 'high', 'open', $1, $1, 'a1', 'coin42',
                   'grant', $2::jsonb, r.id, r.id, 6000, 'CNY', 'google_play', 'a1', 'coin42', 1
              FROM (SELECT max(id) AS id FROM reconcile.runs) r
            RETURNING id
            """, [playOrder, evidence]
        )[0].decode(Int64.self, at: 0)
        try connection.execute(
            """
            INSERT INTO reconcile.review_events (review_item_id, run_id, actor, from_status, to_status, note)
            SELECT $1, max(id), 'reconcile', NULL, 'open', 'detected' FROM reconcile.runs
            """, [id])
        return id
    }

    /// What the diff stores with each item for a decision, shared with scripts/browser-test-seed.sql.
    private static let plantedItemActions = URL(filePath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appending(path: "scripts/planted-item-actions.sql")

    private static func json(_ text: String) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed]) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }
}
