import Foundation

/// HTML escaping for text that came from the database or from clients.
///
/// Every rule here works on Unicode scalars, never on `Character`s: a grapheme cluster can hold a
/// `<` or `"` together with a combining mark (`"` + U+0301) or after a prefix character (U+0600
/// + `<`), and a loop that compares whole clusters lets such a quote or bracket through unescaped.
public enum HTMLText {
    /// Escapes `& < > " '` and CR, enough for element content and double- or single-quoted
    /// attributes. Parsing the result gives back exactly `text`: CR is written as a character
    /// reference because HTML parsers turn a raw CR (and CR LF) into LF.
    public static func escape(_ text: String) -> String {
        // Every character escaped is ASCII, so a text without those bytes is its own escape (most
        // of what a page shows: ids, dates, amounts).
        guard text.utf8.contains(where: { byte in
            byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
                || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\r")
        }) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped.append(contentsOf: "&amp;".unicodeScalars)
            case "<": escaped.append(contentsOf: "&lt;".unicodeScalars)
            case ">": escaped.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": escaped.append(contentsOf: "&quot;".unicodeScalars)
            case "'": escaped.append(contentsOf: "&#39;".unicodeScalars)
            case "\r": escaped.append(contentsOf: "&#13;".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// Text as a page shows data from clients: bidirectional controls made visible, then escaped.
    public static func display(_ text: String) -> String {
        escape(neutralisingBidi(text))
    }

    /// Replaces every bidirectional control (embeddings, overrides, isolates, marks) with a
    /// visible `⟨U+202E⟩`, so a user id cannot reorder what is shown after it (`evil‮txt.exe`).
    public static func neutralisingBidi(_ text: String) -> String {
        // Every bidirectional control is encoded in UTF-8 starting with 0xD8 (U+061C) or 0xE2
        // (U+200E–U+2069): a text with neither byte has none to look for scalar by scalar.
        guard text.utf8.contains(where: { $0 == 0xD8 || $0 == 0xE2 }),
              text.unicodeScalars.contains(where: isBidiControl) else { return text }
        var shown = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isBidiControl(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                shown.append(contentsOf: "⟨U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex)⟩".unicodeScalars)
            } else {
                shown.append(scalar)
            }
        }
        return String(shown)
    }

    /// U+061C, U+200E, U+200F, U+202A–U+202E and U+2066–U+2069: Unicode's `Bidi_Control`, a
    /// property whose set Unicode keeps stable (a test holds this list equal to the standard
    /// library's property over every scalar; looking the property up was a twentieth of the
    /// customer page's CPU).
    public static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}

/// CSV quoting (RFC 4180) for fields that came from clients.
public enum CSVText {
    /// Quotes a field when it holds a comma, quote, CR or LF (compared per Unicode scalar: CR LF
    /// is one `Character`, and a quote can share one with a combining mark), and defuses
    /// spreadsheet formulas: a field starting with `= + - @` (or their fullwidth forms `＝ ＋ －
    /// ＠`, which spreadsheets also read as formulas), a space, tab, CR or LF (before which a
    /// spreadsheet may skip to a formula) gets a leading `'`.
    public static func field(_ value: String) -> String {
        var scalars = String.UnicodeScalarView()
        if let first = value.unicodeScalars.first, formulaStarts.contains(first) { scalars.append("'") }
        var needsQuotes = false
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"":
                needsQuotes = true
                scalars.append(contentsOf: "\"\"".unicodeScalars)
            case ",", "\r", "\n":
                needsQuotes = true
                scalars.append(scalar)
            default:
                scalars.append(scalar)
            }
        }
        return needsQuotes ? "\"" + String(scalars) + "\"" : String(scalars)
    }

    private static let formulaStarts = Set("=+-@\t\r\n \u{FF1D}\u{FF0B}\u{FF0D}\u{FF20}".unicodeScalars)
}

/// Markdown table cells for text from clients.
public enum MarkdownText {
    /// A cell that stays one cell on one line: `|` escaped, CR and LF as spaces, per scalar.
    public static func cell(_ text: String) -> String {
        // Most cells hold none of these: no copy for them.
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "|") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") })
        else { return text }
        var cell = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "|": cell.append(contentsOf: "\\|".unicodeScalars)
            case "\r", "\n": cell.append(" ")
            default: cell.append(scalar)
            }
        }
        return String(cell)
    }
}

/// JSON text for strings that came from clients: RFC 8259 escaping, everything else as UTF-8.
public enum JSONText {
    /// A JSON string literal, quotes included.
    public static func string(_ text: String) -> String {
        var escaped = "\""
        escaped.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }

    /// `null` for nil.
    public static func optional(_ text: String?) -> String { text.map(string) ?? "null" }
}
