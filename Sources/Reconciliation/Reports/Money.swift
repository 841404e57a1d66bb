import Foundation

/// An amount as the database stores it: milliunits (`amount_milli`, `price_milli`) of a currency.
///
/// Shown with the currency's own decimals, its ISO 4217 minor units (CNY 2, JPY 0, KWD 3; 2 for a
/// code ISO 4217 does not list), rounded half away from zero. ``text(in:)`` is the one place an
/// amount becomes text: the terminal, the reports and the pages all call it. The JSON outputs and
/// review.csv keep the milliunits as numbers.
public struct Money: Sendable, Hashable {
    public let milli: Int64
    /// The currency as stored (normally an ISO 4217 code; the products table is the app's).
    public let currency: String

    public init(milli: Int64, currency: String) {
        self.milli = milli
        self.currency = currency
    }

    /// The number of decimals ISO 4217 gives a currency; 2 for a code it does not list.
    public static func minorUnits(of currency: String) -> Int {
        let code = currency.uppercased()
        if noDecimals.contains(code) { return 0 }
        if threeDecimals.contains(code) { return 3 }
        if fourDecimals.contains(code) { return 4 }
        return 2
    }

    // ISO 4217's list of codes whose minor unit is not 2 (current codes only).
    private static let noDecimals: Set = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF",
        "XOF", "XPF",
    ]
    private static let threeDecimals: Set = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"]
    private static let fourDecimals: Set = ["CLF", "UYW"]

    /// The amount in the locale's currency format (`¥516.00` for CNY in zh-Hans, `CN¥516.00`
    /// in en_US, `¥1,500` for JPY in en_US); without a locale, or for a currency that is not a
    /// three-letter code, plain (`516.00 CNY`, `1500 JPY`, `1.50 gems!`), as the CLI prints it.
    public func text(in locale: Locale? = nil) -> String {
        let (digits, whole, fraction) = parts
        let sign = milli < 0 && (whole != 0 || fraction.contains { $0 != "0" }) ? "-" : ""
        guard let locale, currency.count == 3, currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            return sign + String(whole) + (digits == 0 ? "" : "." + fraction) + " " + currency
        }
        let amount = Decimal(string: sign + String(whole) + (digits == 0 ? "" : "." + fraction)) ?? 0
        return amount.formatted(
            .currency(code: currency.uppercased()).locale(locale).precision(.fractionLength(digits)))
    }

    /// The magnitude rounded to the currency's decimals: its digits before and after the point.
    private var parts: (digits: Int, whole: UInt64, fraction: String) {
        let digits = Self.minorUnits(of: currency)
        let magnitude = milli.magnitude
        guard digits < 3 else {
            let thousandths = String(magnitude % 1000)
            let fraction = String(repeating: "0", count: 3 - thousandths.count) + thousandths
            return (digits, magnitude / 1000, fraction + String(repeating: "0", count: digits - 3))
        }
        var scale: UInt64 = 1
        for _ in 0..<(3 - digits) { scale *= 10 }
        // Half away from zero, on the magnitude (no overflow: a milli amount is at most 2^63).
        let minor = magnitude / scale + (magnitude % scale >= scale / 2 ? 1 : 0)
        var unit: UInt64 = 1
        for _ in 0..<digits { unit *= 10 }
        guard digits > 0 else { return (0, minor, "") }
        let rest = String(minor % unit)
        return (digits, minor / unit, String(repeating: "0", count: digits - rest.count) + rest)
    }
}

extension Money {
    /// An amount in major units as a person types it (`6`, `6.50`, `648`), in milliunits: digits
    /// with at most one point, at most three decimals; nil for anything else (a sign, a comma, a
    /// currency symbol), so that a typo is refused rather than read as another amount.
    public static func milli(major text: String) -> Int64? {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts.allSatisfy({ $0.allSatisfy(\.isASCII) }),
            parts.allSatisfy({ $0.allSatisfy(\.isNumber) }), parts[0].count <= 15
        else { return nil }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.count <= 3, parts.count == 1 || !fraction.isEmpty else { return nil }
        guard let whole = Int64(parts[0]), let thousandths = Int64(fraction.padding(toLength: 3, withPad: "0", startingAt: 0))
        else { return nil }
        return whole * 1000 + thousandths
    }

    /// The amount in major units as a JSON number, exactly (`6`, `6.5`, `0.001`): the policies' and
    /// the bulk decisions' JSON (SPEC section 17: 30 is ¥30.00).
    public var majorUnitsJSON: String {
        let magnitude = milli.magnitude
        var fraction = String(magnitude % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return (milli < 0 ? "-" : "") + String(magnitude / 1000) + (fraction.isEmpty ? "" : "." + fraction)
    }
}
