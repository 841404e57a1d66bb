import Foundation

extension String {
    /// Whether the text holds U+0000, which PostgreSQL's text cannot store and libpq would cut a
    /// parameter at. Found with `memchr`: `utf8.contains(0)` walks the view a byte at a time, which
    /// for a notification body (tens of KB of JWS) showed in the receiver's profile.
    public var containsNUL: Bool {
        var text = self
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
    }
}
