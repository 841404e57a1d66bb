import Foundation
import Hummingbird
import Logging
import Mustache
import Postgres
import Reconciliation

/// Turns every error a page throws into an HTML page with the right status (400, 403, 404, 413,
/// 500, 503), inside `SecurityHeadersMiddleware` so error pages carry the same headers as any
/// other page. A 500 is logged with its cause; the page never shows it (it may hold SQL).
struct ErrorPagesMiddleware: RouterMiddleware {
    typealias Context = ReviewRequestContext

    let library: MustacheLibrary

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            try Self.refuseNUL(in: request, context.catalog)
            return try await next(request, context)
        } catch let error as SignInRequired {
            return error.response
        } catch let error as HTTPError {
            if error.status.code >= 500 { Self.logFailure(error, request: request, context: context) }
            return page(status: error.status, message: error.body ?? Self.message(for: error.status, context.catalog), headers: error.headers,
                        context: context)
        } catch let error as DatabaseBusyError {
            context.logger.warning(
                "database busy", metadata: ["http.path": "\(request.uri.path)", "error": "\(error)"])
            return page(
                status: .serviceUnavailable, message: Self.message(for: .serviceUnavailable, context.catalog),
                headers: [.retryAfter: "5"], context: context)
        } catch let error as PostgresError where error.sqlState == "57014" {
            // statement_timeout: the database is stalled or the page asked too much of it.
            context.logger.warning(
                "database statement timed out", metadata: ["http.path": "\(request.uri.path)", "error": "\(error)"])
            return page(
                status: .serviceUnavailable, message: Self.message(for: .serviceUnavailable, context.catalog),
                headers: [.retryAfter: "5"], context: context)
        } catch let error as any HTTPResponseError {
            if error.status.code >= 500 { Self.logFailure(error, request: request, context: context) }
            return page(status: error.status, message: Self.message(for: error.status, context.catalog), headers: [:], context: context)
        } catch {
            Self.logFailure(error, request: request, context: context)
            return page(
                status: .internalServerError, message: Self.message(for: .internalServerError, context.catalog), headers: [:],
                context: context)
        }
    }

    /// A NUL cannot be stored or compared by PostgreSQL: a query string holding one is refused
    /// here, as bad input, instead of failing as a 500 deep in a query. Form bodies are checked
    /// by `Form.read`.
    static func refuseNUL(in request: Request, _ t: Catalog) throws {
        guard let query = request.uri.query else { return }
        if Form(query).containsNUL {
            throw HTTPError(.badRequest, message: t["error.nul_in_address"])
        }
    }

    private static func logFailure(_ error: any Error, request: Request, context: Context) {
        context.logger.error(
            "request failed",
            metadata: [
                "http.method": "\(request.method)", "http.path": "\(request.uri.path)",
                "error": "\(String(reflecting: error))",
            ])
    }

    private func page(
        status: HTTPResponse.Status, message: String, headers: HTTPFields, context: Context
    ) -> Response {
        let t = context.catalog
        let heading = t.text("error.http_heading", ["code": String(status.code)])
        let html = library.render(
            PageFrame(page: ErrorPage(heading: heading, message: message), title: heading, context: context, flash: nil, tab: nil),
            withTemplate: "error") ?? "\(status.code)"
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.contentLength] = nil
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// What an error page says for a status, in the reader's language.
    static func message(for status: HTTPResponse.Status, _ t: Catalog) -> String {
        switch status.code {
        case 400, 401, 403, 404, 405, 413, 429, 503: t["error.http_\(status.code)"]
        default: t["error.http_500"]
        }
    }
}
