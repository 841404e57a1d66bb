import Foundation
@testable import Reconciliation
import Testing

/// Amounts are stored in milliunits and shown with their currency's ISO 4217 decimals, by one
/// function (`Money.text(in:)`) that the terminal, the reports and the pages call.
@Suite("Money")
struct MoneyTests {
    @Test(arguments: [
        ("CNY", 2), ("USD", 2), ("EUR", 2), ("cny", 2),
        ("JPY", 0), ("KRW", 0), ("VND", 0), ("CLP", 0), ("ISK", 0), ("XOF", 0),
        ("KWD", 3), ("BHD", 3), ("JOD", 3), ("OMR", 3), ("TND", 3), ("IQD", 3), ("LYD", 3),
        ("CLF", 4), ("XYZ", 2), ("gems!", 2),
    ])
    func minorUnitsAreISO4217s(currency: String, digits: Int) {
        #expect(Money.minorUnits(of: currency) == digits)
    }

    /// Plain, as `reconcile run`'s summary and `reconcile lookup` print it.
    @Test(arguments: [
        (516_000, "CNY", "516.00 CNY"), (6_990, "USD", "6.99 USD"), (0, "EUR", "0.00 EUR"),
        (1_500_000, "JPY", "1500 JPY"), (999, "KRW", "1 KRW"), (499, "JPY", "0 JPY"),
        (1_234_567, "KWD", "1234.567 KWD"), (5, "BHD", "0.005 BHD"), (12_345, "CLF", "12.3450 CLF"),
        // Half away from zero, on both sides, and no sign on what rounds to zero.
        (1_005, "EUR", "1.01 EUR"), (1_004, "EUR", "1.00 EUR"), (-1_005, "EUR", "-1.01 EUR"), (-4, "USD", "0.00 USD"),
        (1_500, "XYZ", "1.50 XYZ"), (1_500, "gems!", "1.50 gems!"),
        (Int64.min, "USD", "-9223372036854775.81 USD"),
    ] as [(Int64, String, String)])
    func plainTextHasTheCurrencysDecimals(milli: Int64, currency: String, expected: String) {
        #expect(Money(milli: milli, currency: currency).text() == expected)
    }

    /// In a reader's locale, as report.md, report.html and the pages show it.
    @Test(arguments: [
        (516_000, "CNY", "CN¥516.00", "¥516.00"), (6_990, "USD", "$6.99", "US$6.99"),
        (1_500_000, "JPY", "¥1,500", "JP¥1,500"), (1_500_400, "KRW", "₩1,500", "₩1,500"),
        (1_234_567, "KWD", "KWD\u{A0}1,234.567", "KWD\u{A0}1,234.567"), (1_005, "EUR", "€1.01", "€1.01"),
        (1_500, "gems!", "1.50 gems!", "1.50 gems!"),
    ] as [(Int64, String, String, String)])
    func localeTextHasTheCurrencysDecimals(milli: Int64, currency: String, english: String, chinese: String) {
        let amount = Money(milli: milli, currency: currency)
        #expect(amount.text(in: Language.english.locale) == english)
        #expect(amount.text(in: Language.simplifiedChinese.locale) == chinese)
        #expect(Reader.standard.money(milli: milli, currency: currency) == english)
    }
}
