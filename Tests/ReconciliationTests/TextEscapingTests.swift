import AppStoreSimulator
import Foundation
import Reconciliation
import Testing

/// Escaping and quoting per Unicode scalar (SPEC section 11), checked against real parsers:
/// Python's `html.parser` and `csv`, run as a child process over random strings from all of
/// Unicode, weighted towards what breaks per-`Character` code (combining marks, prefix
/// characters, bidi controls, NUL, CR LF, quotes and brackets).
@Suite("Escaping per Unicode scalar")
struct TextEscapingTests {
    /// The scalars that matter most, drawn often; the rest are drawn from all of Unicode.
    static let interesting: [Unicode.Scalar] = [
        "<", ">", "&", "\"", "'", ",", "\r", "\n", "\t", "\u{0}", "=", "+", "-", "@", "|",
        "\u{301}", "\u{308}", "\u{20DD}", "\u{600}", "\u{605}", "\u{110BD}", "\u{202E}", "\u{202D}", "\u{2066}",
        "\u{2069}", "\u{200F}", "\u{061C}", "\u{200D}", "\u{FE0F}", "\u{1F600}", "\u{1F3FB}", "\u{1100}", "\u{1161}",
        "\u{85}", "\u{2028}", "\u{FEFF}", "a", " ",
    ]

    static func randomStrings(count: Int, seed: UInt64) -> [String] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...24, using: &generator) {
                if Bool.random(using: &generator) {
                    scalars.append(interesting.randomElement(using: &generator)!)
                } else {
                    var value: UInt32
                    repeat { value = UInt32.random(in: 0...0x10FFFF, using: &generator) } while Unicode.Scalar(value) == nil
                    scalars.append(Unicode.Scalar(value)!)
                }
            }
            return String(scalars)
        }
    }

    /// Runs a Python 3 program with `input` (JSON) on standard input; returns its JSON output.
    static func python(_ program: String, input: Any) throws -> Any {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", program]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let data = try JSONSerialization.data(withJSONObject: input)
        let writer = Thread {
            stdin.fileHandleForWriting.write(data)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PythonError(message: String(decoding: errors, as: UTF8.self))
        }
        return try JSONSerialization.jsonObject(with: output)
    }

    struct PythonError: Error { let message: String }

    /// Collects, per `<p>`, its `title` attribute and its text, as a browser's parser reads them.
    static let htmlProgram = """
        import json, sys
        from html.parser import HTMLParser
        class P(HTMLParser):
            def __init__(self):
                super().__init__(convert_charrefs=True)
                self.items = []
                self.inside = False
                self.tags = 0
            def handle_starttag(self, tag, attrs):
                self.tags += 1
                if tag == "p":
                    self.items.append([dict(attrs).get("title"), ""])
                    self.inside = True
            def handle_endtag(self, tag):
                if tag == "p":
                    self.inside = False
            def handle_data(self, data):
                if self.inside:
                    self.items[-1][1] += data
        pages = json.load(sys.stdin)
        out = []
        for page in pages:
            p = P()
            p.feed(page)
            p.close()
            out.append({"items": p.items, "tags": p.tags})
        json.dump(out, sys.stdout)
        """

    @Test(arguments: [1 as UInt64, 2, 3])
    func escapedHTMLParsesBackToExactlyTheText(seed: UInt64) throws {
        let texts = Self.randomStrings(count: 400, seed: seed)
        let pages = texts.map { text in
            "<div><p title=\"\(HTMLText.escape(text))\">\(HTMLText.escape(text))</p><p title='\(HTMLText.escape(text))'>x</p></div>"
        }
        let parsed = try #require(try Self.python(Self.htmlProgram, input: pages) as? [[String: Any]])
        #expect(parsed.count == texts.count)
        for (text, page) in zip(texts, parsed) {
            let items = try #require(page["items"] as? [[Any]])
            #expect(page["tags"] as? Int == 3, "an element was injected by \(text.unicodeScalars.map { $0.value })")
            guard items.count == 2 else { continue }
            #expect(items[0][0] as? String == text, "double-quoted attribute of \(text.unicodeScalars.map { $0.value })")
            #expect(items[0][1] as? String == text, "text of \(text.unicodeScalars.map { $0.value })")
            #expect(items[1][0] as? String == text, "single-quoted attribute of \(text.unicodeScalars.map { $0.value })")
        }
    }

    /// The list of bidirectional controls is Unicode's `Bidi_Control` as the standard library
    /// knows it, over every scalar; and every one of them is made visible in any text.
    @Test func theBidiControlsAreExactlyUnicodesBidiControlProperty() {
        var listed: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            #expect(HTMLText.isBidiControl(scalar) == scalar.properties.isBidiControl, "U+\(String(value, radix: 16))")
            if scalar.properties.isBidiControl { listed.append(value) }
        }
        for value in listed {
            let text = "a\(Character(Unicode.Scalar(value)!))b"
            #expect(!HTMLText.display(text).unicodeScalars.contains { $0.value == value }, "U+\(String(value, radix: 16))")
        }
        #expect(listed.count == 12)
    }

    @Test func displayedHTMLShowsBidiControlsAsVisibleMarks() {
        #expect(HTMLText.display("evil\u{202E}gnp.exe") == "evil⟨U+202E⟩gnp.exe")
        #expect(HTMLText.display("\u{2066}<b>\u{2069}") == "⟨U+2066⟩&lt;b&gt;⟨U+2069⟩")
        #expect(HTMLText.display("plain") == "plain")
    }

    @Test(arguments: [
        ("\"\u{301}", "&quot;\u{301}"), ("\u{600}<", "\u{600}&lt;"), ("a\r\nb", "a&#13;\nb"), ("'\u{308}", "&#39;\u{308}"),
    ])
    func aMarkSharingAClusterDoesNotHideAQuoteOrBracket(text: String, escaped: String) {
        #expect(HTMLText.escape(text).unicodeScalars.elementsEqual(escaped.unicodeScalars))
    }

    static let csvProgram = """
        import csv, io, json, sys
        rows = json.load(sys.stdin)
        out = []
        for text in rows:
            out.append(list(csv.reader(io.StringIO(text, newline=""))))
        json.dump(out, sys.stdout)
        """

    @Test(arguments: [1 as UInt64, 2, 3])
    func quotedCSVParsesBackToExactlyTheFields(seed: UInt64) throws {
        let texts = Self.randomStrings(count: 600, seed: seed)
        // Rows of three fields, each written as the reports and exports write them.
        var rows: [[String]] = []
        for start in stride(from: 0, to: texts.count - 2, by: 3) { rows.append(Array(texts[start..<(start + 3)])) }
        let documents = rows.map { row in
            row.map(CSVText.field).joined(separator: ",") + "\r\n" + "next,row\r\n"
        }
        let parsed = try #require(try Self.python(Self.csvProgram, input: documents) as? [[[String]]])
        #expect(parsed.count == rows.count)
        for (row, records) in zip(rows, parsed) {
            let expected = row.map { field -> String in
                guard let first = field.unicodeScalars.first,
                    "=+-@\t\r\n \u{FF1D}\u{FF0B}\u{FF0D}\u{FF20}".unicodeScalars.contains(first)
                else { return field }
                return "'" + field
            }
            #expect(records.count == 2, "a field split the row: \(row.map { $0.unicodeScalars.map(\.value) })")
            #expect(records.first == expected, "\(row.map { $0.unicodeScalars.map(\.value) })")
            #expect(records.last == ["next", "row"])
        }
    }

    @Test(arguments: [
        ("a\r\nb", "\"a\r\nb\""), ("\"\u{301}", "\"\"\"\u{301}\""), ("x,\u{301}y", "\"x,\u{301}y\""),
        ("=\u{301}1+1", "'=\u{301}1+1"), ("plain", "plain"),
        // Issue 24 item 13: a leading space or line feed, and the fullwidth signs.
        (" =1+1", "' =1+1"), ("\n=1+1", "\"'\n=1+1\""), ("\u{FF1D}1+1", "'\u{FF1D}1+1"),
        ("\u{FF0B}1", "'\u{FF0B}1"), ("\u{FF20}SUM(A1)", "'\u{FF20}SUM(A1)"),
    ])
    func csvQuotesPerScalar(field: String, quoted: String) {
        #expect(CSVText.field(field).unicodeScalars.elementsEqual(quoted.unicodeScalars))
    }

    @Test func markdownCellsStayOneCellOnOneLine() {
        #expect(MarkdownText.cell("a|\u{301}b\r\nc").unicodeScalars.elementsEqual("a\\|\u{301}b  c".unicodeScalars))
    }
}
