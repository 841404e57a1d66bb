import Foundation
import Postgres

/// One line of `reconcile check`.
public struct CheckResult: Sendable, Equatable {
    /// What was checked.
    public var name: String
    /// Whether it passed.
    public var passed: Bool
    /// What was found, or what to fix.
    public var detail: String

    /// Creates a result.
    public init(_ name: String, passed: Bool, _ detail: String) {
        self.name = name
        self.passed = passed
        self.detail = detail
    }
}

/// The database side of `reconcile check`: connectivity, schema, and the input relations'
/// columns (SPEC section 2), each as one pass/fail line with what to fix.
public enum Preflight {
    /// The columns the job reads from each input relation (`sql/schema/read_*.sql` read them all).
    public static let requiredColumns: [(setting: String, columns: [String])] = [
        ("RECONCILE_UPLOADS_RELATION", ["id", "user_id", "kind", "payload", "application_username", "app_account_token",
                                        "claimed_transaction_id", "device", "uploaded_at"]),
        ("RECONCILE_DELIVERIES_RELATION", ["id", "transaction_id", "user_id", "product_id", "quantity", "delivered_at",
                                           "revoked_at"]),
        ("RECONCILE_PRODUCTS_RELATION", ["product_id", "product_type", "price_milli", "currency"]),
    ]

    /// Runs the database checks; never throws.
    public static func database(_ settings: Settings) -> [CheckResult] {
        let connection: Connection
        do {
            connection = try settings.connect()
        } catch {
            return [CheckResult(
                "database", passed: false,
                "\(error) — set DATABASE_URL (libpq URI or conninfo) or the PG* variables")]
        }
        var results = [CheckResult("database", passed: true, "connected (server \(connection.serverVersion))")]
        do {
            try Schema.requireUpToDate(connection)
            results.append(CheckResult("schema", passed: true, "schema reconcile is up to date"))
        } catch {
            results.append(CheckResult("schema", passed: false, "\(error)"))
        }
        let inputs = [
            ("uploads", settings.uploadsRelation, SQL.readUploads),
            ("deliveries", settings.deliveriesRelation, SQL.readDeliveries),
            ("products", settings.productsRelation, SQL.readProducts),
        ]
        for ((setting, columns), (name, relation, read)) in zip(requiredColumns, inputs) {
            results.append(
                check(relation: relation, as: name, setting: setting, columns: columns, reading: read, on: connection))
        }
        return results
    }

    /// Checks one input relation: `read` reads every one of `columns` from it, named `:name` there.
    static func check(
        relation: QualifiedRelation, as name: String, setting: String, columns: [String], reading read: SQLFile,
        on connection: Connection
    ) -> CheckResult {
        do {
            let present = try connection.query(SQL.relationColumns, ["relation": relation.sql])
                .map { try $0.decode(String.self, at: 0) }
            let missing = columns.filter { !present.contains($0) }
            guard missing.isEmpty else {
                return CheckResult(
                    relation.sql, passed: false,
                    "missing column\(missing.count > 1 ? "s" : "") \(missing.joined(separator: ", ")): "
                        + "add \(missing.count > 1 ? "them" : "it") or point \(setting) at a view that renames yours")
            }
            try connection.query(read, relations: [name: relation])
            return CheckResult(relation.sql, passed: true, "readable, with every column the job reads")
        } catch let error as PostgresError where ["42P01", "3F000"].contains(error.sqlState ?? "") {
            return CheckResult(relation.sql, passed: false, "does not exist: run `reconcile migrate` or set \(setting)")
        } catch let error as PostgresError where error.sqlState == "42501" {
            return CheckResult(relation.sql, passed: false, "permission denied: GRANT SELECT ON \(relation) to the job's role")
        } catch {
            return CheckResult(relation.sql, passed: false, "\(error)")
        }
    }

    /// The checks' statements (`sql/schema/`).
    enum SQL {
        static let relationColumns: SQLFile = "schema/relation_columns.sql"
        static let readUploads: SQLFile = "schema/read_uploads.sql"
        static let readDeliveries: SQLFile = "schema/read_deliveries.sql"
        static let readProducts: SQLFile = "schema/read_products.sql"
    }
}
