import Foundation
@testable import Postgres
import Testing

@Suite("Timestamps")
struct TimestampTests {
    @Test(arguments: [
        ("2026-11-22 02:00:00+00", 1_795_312_800.0),
        ("2026-11-22T02:00:00Z", 1_795_312_800.0),
        ("2026-11-22 10:00:00+08", 1_795_312_800.0),
        ("2026-11-22 07:30:00+05:30", 1_795_312_800.0),
        ("2026-11-22 02:00:00.25+00", 1_795_312_800.25),
        ("1969-12-31 23:59:59+00", -1.0),
        ("2026-11-22", 1_795_305_600.0),
    ])
    func parses(_ text: String, _ seconds: Double) throws {
        let date = try #require(PostgresTimestamp.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_001)
    }

    @Test(arguments: ["", "2026-13-01", "2026-11-22 25:00:00+00", "yesterday", "2026-11-22 02:00:00+0x"])
    func rejects(_ text: String) {
        #expect(PostgresTimestamp.parse(text) == nil)
    }

    @Test func formatsInUTCWithMicroseconds() {
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: 1_795_312_800)) == "2026-11-22T02:00:00Z")
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: 1_795_312_800.5)) == "2026-11-22T02:00:00.500000Z")
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500000Z")
    }

    @Test func formatAndParseRoundTrip() throws {
        for seconds in stride(from: -2_000_000_000.0, to: 4_000_000_000.0, by: 123_456_789.123456) {
            let date = Date(timeIntervalSince1970: (seconds * 1_000_000).rounded() / 1_000_000)
            let parsed = try #require(PostgresTimestamp.parse(PostgresTimestamp.format(date)))
            #expect(abs(parsed.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_002)
        }
    }
}

@Suite("Identifiers")
struct IdentifierTests {
    @Test(arguments: [
        ("deliveries", "\"deliveries\""),
        ("app.Deliveries", "\"app\".\"deliveries\""),
        ("\"App Ledger\".\"Credits\"", "\"App Ledger\".\"Credits\""),
        ("\"we\"\"ird\"", "\"we\"\"ird\""),
    ])
    func quotesRelationNames(_ input: String, _ quoted: String) {
        #expect(Identifier.qualifiedRelation(input) == quoted)
    }

    @Test(arguments: [
        "", "a.b.c", "deliveries; DROP TABLE x", "1table", "a..b", "\"open", "del-iveries", "t--", "a b",
    ])
    func rejectsWhatIsNotARelationName(_ input: String) {
        #expect(Identifier.qualifiedRelation(input) == nil)
    }
}

@Suite("Parameters")
struct ParameterTests {
    @Test func encodesInPostgresTextFormat() {
        #expect(true.postgresText == "t")
        #expect(Data([0x00, 0xab, 0xff]).postgresText == "\\x00abff")
        #expect(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!.postgresText
            == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        #expect((nil as Int?).postgresText == nil)
    }

    @Test func encodesArraysAsLiteralsWithQuotesAndBackslashesEscaped() {
        #expect(([] as [String]).postgresText == "{}")
        #expect(["a", #"say "hi""#, #"back\slash"#, "é,}"].postgresText == #"{"a","say \"hi\"","back\\slash","é,}"}"#)
        #expect(([1, nil, 3] as [Int?]).postgresText == #"{"1",NULL,"3"}"#)
    }

    @Test func findsNULWhereverItIs() {
        #expect(!"".containsNUL)
        #expect(!"no nul here, é".containsNUL)
        #expect("\u{0}".containsNUL)
        #expect((String(repeating: "x", count: 40_000) + "\u{0}").containsNUL)
    }

    @Test func decodesBytea() {
        #expect(Data.parse("\\x00abff") == Data([0x00, 0xab, 0xff]))
        #expect(Data.parse("\\x0") == nil)
    }

    @Test func redactsQuotedValues() {
        let message = PostgresError.redact(#"invalid input syntax for type integer: "s3cret""#, values: ["s3cret"])
        #expect(message == #"invalid input syntax for type integer: "‹redacted›""#)
    }
}
