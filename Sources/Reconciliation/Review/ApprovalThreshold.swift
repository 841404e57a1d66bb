import Foundation

/// `RECONCILE_APPROVAL_ABOVE` (SPEC section 17): per currency, the value above which a decision
/// that makes the app act (granted, revoked, moved) waits for a second person.
///
/// "Above" is strictly greater: with `CNY=648`, a ¥648.00 item is decided at once and a ¥648.01
/// one waits. An item whose value cannot be compared (its amount or currency unknown, or a
/// currency the setting does not name) waits too: the setting exists so that no one person moves
/// value unchecked, and a value nobody can read is not known to be below the line. Set a limit for
/// every currency the app sells in. Without the setting (``none``) nothing waits.
///
/// Every process configured with it records it in the database (``record(on:by:)``), and a
/// decision applies the stricter of its own and the recorded one (``ReviewDecisions``), so a shell,
/// a `serve` or a receiver started without the setting cannot skip approval.
public struct ApprovalThreshold: Sendable, Equatable, CustomStringConvertible {
    /// The limit per currency (upper-case ISO code), in milliunits.
    public var milliByCurrency: [String: Int64]

    /// No approval: every decision takes effect at once.
    public static let none = ApprovalThreshold(milliByCurrency: [:])

    public init(milliByCurrency: [String: Int64]) {
        self.milliByCurrency = Dictionary(milliByCurrency.map { ($0.key.uppercased(), $0.value) }) { $1 }
    }

    /// Reads `CNY=648,USD=99` (major units, e.g. `99.50`); nil when the text is not such a list
    /// (empty entries, a currency twice, an amount that is not a plain number).
    public init?(parsing text: String) {
        var limits: [String: Int64] = [:]
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = entry.split(separator: "=", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, (3...8).contains(pair[0].count), pair[0].allSatisfy({ $0.isASCII && $0.isLetter }),
                let milli = Money.milli(major: pair[1]), limits[pair[0].uppercased()] == nil
            else { return nil }
            limits[pair[0].uppercased()] = milli
        }
        guard !limits.isEmpty else { return nil }
        self.init(milliByCurrency: limits)
    }

    /// Whether any decision can wait.
    public var isEnabled: Bool { !milliByCurrency.isEmpty }

    /// Whether a decision on an item of this value waits for approval (the type's comment says why
    /// an unknown value does).
    public func isExceeded(by value: Money?) -> Bool {
        guard isEnabled else { return false }
        guard let value, let limit = milliByCurrency[value.currency.uppercased()] else { return true }
        return value.milli > limit
    }

    /// The stricter of this threshold and `other` (SPEC section 17: a decision applies the stricter
    /// of its own setting and the recorded one): per currency, the lower limit; a currency only one
    /// of them names, that one's limit. An item in a currency neither names still waits, as the
    /// type's comment says.
    public func stricter(_ other: ApprovalThreshold) -> ApprovalThreshold {
        ApprovalThreshold(milliByCurrency: milliByCurrency.merging(other.milliByCurrency, uniquingKeysWith: min))
    }

    /// `CNY=648.00,USD=99.00`, currencies in order.
    public var description: String {
        milliByCurrency.sorted { $0.key < $1.key }
            .map { "\($0.key)=\(Money(milli: $0.value, currency: $0.key).text().split(separator: " ")[0])" }
            .joined(separator: ",")
    }
}
