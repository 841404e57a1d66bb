/// How long after the purchase its first upload came (SPEC section 19's buckets), as
/// `sql/insights/segments.sql` computes it. The raw values are the JSON's; `label` the terminal's.
public enum UploadDelay: String, Sendable, CaseIterable {
    case underAMinute = "under_1_minute"
    case underAnHour = "under_1_hour"
    case underADay = "under_1_day"
    case later
    /// No upload carried the purchase (it reached the job through a notification or a history).
    case neverUploaded = "never_uploaded"

    public var label: String {
        switch self {
        case .underAMinute: "< 1 min"
        case .underAnHour: "< 1 h"
        case .underADay: "< 1 day"
        case .later: "later"
        case .neverUploaded: "never uploaded"
        }
    }
}
