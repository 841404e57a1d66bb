import Foundation
import Hummingbird
import NIOCore

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
struct SessionMiddleware: ContextMiddleware {
    let sessions: SessionStore

    func settle(_ context: inout ReviewRequestContext, for request: Request) async {
        if let id = request.cookies[ReviewSite.cookieName]?.value, !id.isEmpty {
            context.session = await sessions.session(id: id)
        }
    }
}

/// A middleware that only fills in parts of the request's context before the routes run.
protocol ContextMiddleware: RouterMiddleware where Context == ReviewRequestContext {
    func settle(_ context: inout ReviewRequestContext, for request: Request) async
}

extension ContextMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        await settle(&context, for: request)
        return try await next(request, context)
    }
}

/// Reads every request's whole body (at most ``maximumBody``) before any route runs, within
/// `timeLimit` of its head: a client that trickles a body, without logging in, has its connection
/// closed at the limit (the idle timeout restarts with each byte, so it alone cannot). A body that
/// cannot be parsed (a malformed chunk) is the client's fault: a 400 page, never a 500, after
/// which the connection ends. Both are logged
/// at notice level, as what clients do wrong is.
struct RequestBodyMiddleware: RouterMiddleware {
    typealias Context = ReviewRequestContext

    /// Form bodies are a note and a few fields.
    static let maximumBody = 64 * 1024

    let timeLimit: TimeAmount

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let channel = context.connection.channel
        let timer = channel.eventLoop.scheduleTask(in: timeLimit) {
            context.logger.notice(
                "request body not received in time; connection closed",
                metadata: ["client.address": "\(context.connection.clientAddress)", "http.path": "\(request.uri.path)"])
            channel.close(promise: nil)
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maximumBody)
            timer.cancel()
        } catch let error as any HTTPResponseError {
            // Too large (NIO's too-many-bytes error is a 413): answered at once; the timer still
            // closes a connection whose client goes on sending.
            throw error
        } catch {
            timer.cancel()
            context.logger.notice(
                "request body unreadable", metadata: [
                    "client.address": "\(context.connection.clientAddress)", "http.path": "\(request.uri.path)",
                    "error": "\(error)",
                ])
            // The 400 page goes out, then the connection ends (`CloseAfterAnswerHandler`): what
            // follows a malformed chunk cannot be read as a next request. Closing here sent nothing.
            throw HTTPError(.badRequest, headers: [.connection: "close"])
        }
        var request = request
        request.body = RequestBody(buffer: body)
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

    /// Every value of a field given several times (`id=3&id=7`), in order.
    func values(_ name: String) -> [String] { pairs.filter { $0.0 == name }.map(\.1) }

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
