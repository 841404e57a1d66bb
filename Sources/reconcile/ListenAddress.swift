/// `HOST:PORT` or `[v6]:PORT` of a `--listen` option; nil when it is neither (port 0 picks a free one).
func listenAddress(_ text: String) -> (host: String, port: Int)? {
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
        (0...65535).contains(port)
    else { return nil }
    var host = String(text[..<colon])
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    return host.isEmpty ? nil : (host, port)
}
