import Foundation

extension String {
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`, reading bytes where the text's ends are
    /// ASCII: Foundation turns the whole text into UTF-16 first, which for a notification body
    /// (tens of KB of JWS) took 40 % of the receiver's CPU. Only when a non-ASCII character ends
    /// the text, after the ASCII blanks, is Foundation asked.
    public func trimmingWhitespacesAndNewlines() -> String {
        // The ASCII members of whitespacesAndNewlines: tab, LF, VT, FF, CR and space.
        func blank(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { !blank($0) }) else { return "" }
        let last = bytes.lastIndex(where: { !blank($0) })!
        guard bytes[first] < 0x80, bytes[last] < 0x80 else { return trimmingCharacters(in: .whitespacesAndNewlines) }
        if first == bytes.startIndex, bytes.index(after: last) == bytes.endIndex { return self }
        return String(self[first...last])
    }
}
