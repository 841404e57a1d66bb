import Foundation
import Hummingbird

/// Headers every response carries: pages load only this site's stylesheet, run no script, cannot
/// be framed, and are never cached (they show customer data).
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = ReviewRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] =
                "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
                + "frame-ancestors 'none'; base-uri 'none'"
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}

/// Finds the session of the request's cookie. Whether a route needs one is said by where it is
/// registered: the signed-in routes are a group of `SignedInContext`, which cannot be made without
/// a session (see `ReviewSite.addRoutes`).
struct SessionMiddleware: RouterMiddleware {
    typealias Context = ReviewRequestContext

    let sessions: SessionStore

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        if let id = request.cookies[ReviewSite.cookieName]?.value, !id.isEmpty {
            context.session = await sessions.session(id: id)
        }
        return try await next(request, context)
    }
}

/// An `application/x-www-form-urlencoded` body or query string: `+` is a space, then percent-decoding.
struct Form: Sendable {
    private(set) var pairs: [(String, String)] = []

    init(_ encoded: String) {
        for part in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let halves = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            pairs.append((decode(halves[0]), halves.count > 1 ? decode(halves[1]) : ""))
        }
    }

    /// The first value of a field.
    subscript(_ name: String) -> String? { pairs.first { $0.0 == name }?.1 }

    /// Whether a name or value holds a NUL, which PostgreSQL cannot take.
    var containsNUL: Bool {
        pairs.contains { $0.0.utf8.contains(0) || $0.1.utf8.contains(0) }
    }

    /// Reads a form body (at most 64 KB: a note and a few fields); 400 when it holds a NUL.
    static func read(_ request: Request, context: some ReviewContext) async throws -> Form {
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        let form = Form(String(buffer: buffer))
        guard !form.containsNUL else { throw HTTPError(.badRequest, message: context.catalog["error.nul_in_form"]) }
        return form
    }

    /// Encodes fields for a query string.
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map {
            ($0.0.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "") + "="
                + ($0.1.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
        }.joined(separator: "&")
    }

    /// RFC 3986 unreserved characters, ASCII only: everything else is percent-encoded.
    static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
