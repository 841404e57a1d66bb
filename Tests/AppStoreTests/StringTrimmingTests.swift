import AppStore
import Foundation
import PropertyBased
import Testing

/// The receiver trims every body it is posted; the byte-reading trim is Foundation's trim.
@Suite struct StringTrimmingTests {
    @Test(arguments: [
        "", " ", "\n\t\r\u{0B}\u{0C} ", "{}", " {} ", "\n{\"signedPayload\":\"a.b.c\"}\r\n", "\u{00A0}{}\u{2028}",
        " \u{0085}x", "x\u{3000} ", "e\u{0301}", " \u{0301}e ", "caf\u{E9}", "\u{E9}", "a b", "\u{FEFF}{}",
    ])
    func readsAsFoundationTrims(_ text: String) {
        #expect(text.trimmingWhitespacesAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func anyTextReadsAsFoundationTrims() async {
        let pieces = [" ", "\n", "\t", "\r\n", "\u{0B}", "\u{00A0}", "\u{0085}", "\u{2029}", "x", "{", "\u{E9}", "\u{0301}", "\u{1F600}"]
        await propertyCheck(count: 500, input: Gen.int(in: 0...(pieces.count - 1)).array(of: 0...8)) { picks in
            let text = picks.map { pieces[$0] }.joined()
            #expect(text.trimmingWhitespacesAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}
