/// What `reconcile insights` breaks the judged purchases down by (SPEC section 19). The raw values
/// are the names `sql/insights/segments.sql` pairs with each purchase's keys, and the `by` of the
/// JSON.
public enum InsightDimension: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The app version of the device JSON of the upload that first carried the purchase.
    case appVersion = "app_version"
    /// Its OS version.
    case osVersion = "os_version"
    /// Its device model.
    case deviceModel = "device_model"
    case product
    case store
    /// Purchase to first upload, in the buckets of ``UploadDelay``.
    case uploadDelay = "upload_delay"
    /// The purchase's hour of the day in UTC (`00` … `23`).
    case purchaseHour = "purchase_hour"

    public var description: String { rawValue }

    /// The segment's value as a person reads it on a terminal: the upload delay's bucket in words,
    /// `14:00–14:59 UTC` for an hour; other values as they are.
    public func label(of value: String) -> String {
        switch self {
        case .uploadDelay: UploadDelay(rawValue: value)?.label ?? value
        case .purchaseHour: "\(value):00–\(value):59 UTC"
        case .appVersion, .osVersion, .deviceModel, .product, .store: value
        }
    }

    /// The dimension's name in a terminal table's heading.
    public var title: String {
        switch self {
        case .appVersion: "app version"
        case .osVersion: "OS version"
        case .deviceModel: "device model"
        case .product: "product"
        case .store: "store"
        case .uploadDelay: "purchase to first upload"
        case .purchaseHour: "purchase hour (UTC)"
        }
    }
}
