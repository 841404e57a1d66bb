import Foundation
import Hummingbird
import Logging
import Mustache
import Postgres

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
            try Self.refuseNUL(in: request)
            return try await next(request, context)
        } catch let error as HTTPError {
            if error.status.code >= 500 { Self.logFailure(error, request: request, context: context) }
            return page(status: error.status, message: error.body ?? Self.message(for: error.status), headers: error.headers)
        } catch let error as DatabaseBusyError {
            context.logger.warning(
                "database busy", metadata: ["http.path": "\(request.uri.path)", "error": "\(error)"])
            return page(
                status: .serviceUnavailable, message: Self.message(for: .serviceUnavailable),
                headers: [.retryAfter: "5"])
        } catch let error as PostgresError where error.sqlState == "57014" {
            // statement_timeout: the database is stalled or the page asked too much of it.
            context.logger.warning(
                "database statement timed out", metadata: ["http.path": "\(request.uri.path)", "error": "\(error)"])
            return page(
                status: .serviceUnavailable, message: Self.message(for: .serviceUnavailable),
                headers: [.retryAfter: "5"])
        } catch let error as any HTTPResponseError {
            if error.status.code >= 500 { Self.logFailure(error, request: request, context: context) }
            return page(status: error.status, message: Self.message(for: error.status), headers: [:])
        } catch {
            Self.logFailure(error, request: request, context: context)
            return page(status: .internalServerError, message: Self.message(for: .internalServerError), headers: [:])
        }
    }

    /// A NUL cannot be stored or compared by PostgreSQL: a query string holding one is refused
    /// here, as bad input, instead of failing as a 500 deep in a query. Form bodies are checked
    /// by `Form.read`.
    static func refuseNUL(in request: Request) throws {
        guard let query = request.uri.query else { return }
        if Form(query).containsNUL {
            throw HTTPError(.badRequest, message: "The address holds a NUL character.")
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

    private func page(status: HTTPResponse.Status, message: String, headers: HTTPFields) -> Response {
        let html = library.render(
            ErrorPage(session: nil, heading: "\(status.code) \(status.reasonPhrase)", message: message),
            withTemplate: "error") ?? "\(status.code)"
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.contentLength] = nil
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func message(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 400: "The request was not understood."
        case 401: "Log in first."
        case 403: "That is not allowed."
        case 404: "There is no such page."
        case 405: "That method is not allowed here."
        case 413: "The request is too large."
        case 503: "The database is busy. Try again in a moment."
        default: "Something went wrong on the server. It has been logged."
        }
    }
}
