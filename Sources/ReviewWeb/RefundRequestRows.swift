import Foundation
import Mustache
import Reconciliation

/// What the job answered Apple about refund requests (`CONSUMPTION_REQUEST`) and what Apple
/// decided (SPEC section 14), as rows of the item page and the customer page. Its values are given
/// by name (`TemplateValues`), as the desk page's other parts are (Views.swift).
struct RefundRequestRow: TemplateValues {
    /// When Apple asked (the request's `signedDate`).
    let requested: String
    /// When the job answered, or recorded the request expired or refused.
    let answered: String
    /// `answered`, `expired`, `failed`: the CSS class.
    let status: String
    /// Sent, expired (never sent) or failed, with Apple's reason for a failure.
    let statusLabel: String
    let delivery: String
    /// `consumptionPercentage` as a percentage of the delivered quantity.
    let consumed: String
    let preference: String
    /// `Refunded 21 Nov 10:02`, `Refund declined …` or not decided yet.
    let outcome: String
    /// `refunded`, `declined` or `undecided`: the CSS class.
    let outcomeClass: String

    static let byName: TemplateNames<Self> = [
        "requested": \.requested, "answered": \.answered, "status": \.status, "statusLabel": \.statusLabel,
        "delivery": \.delivery, "consumed": \.consumed, "preference": \.preference, "outcome": \.outcome,
        "outcomeClass": \.outcomeClass,
    ]

    static func rows(_ records: [ConsumptionAnswerRecord], reader: Reader) -> [RefundRequestRow] {
        let t = reader.catalog
        return records.map { record in
            let sent = record.sent
            let wasSent = record.body != nil
            var statusLabel = t.label("refund_request.status", record.status.rawValue)
            // Apple's or the client's own words: data, shown as they came.
            if record.status == .failed, let error = record.appleError, !error.isEmpty { statusLabel += " (\(error))" }
            let outcome = record.outcome.map {
                t.text("refund_request.outcome.\($0.rawValue)", ["date": record.decidedAt.map { reader.minute($0) } ?? "—"])
            } ?? t["refund_request.undecided"]
            return RefundRequestRow(
                requested: reader.minute(record.requestedAt), answered: reader.minute(record.answeredAt),
                status: record.status.rawValue, statusLabel: statusLabel,
                delivery: sent.deliveryStatus.map { t.label("refund_request.delivery", $0) } ?? "—",
                consumed: sent.consumptionPercentage.map {
                    (Double($0) / 1000).formatted(.number.precision(.fractionLength(0...3))) + "%"
                } ?? "—",
                preference: wasSent ? t.label("refund_request.preference", sent.refundPreference ?? "none") : "—",
                outcome: outcome, outcomeClass: record.outcome?.rawValue ?? "undecided")
        }
    }
}
