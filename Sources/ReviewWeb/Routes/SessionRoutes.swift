import Foundation
import Hummingbird
import Reconciliation

/// Logging in and out, single-use login links, and the stylesheet. `publicRoutes` are the routes a
/// browser reaches before it has a session; `accountRoutes` (logging out, making a login link)
/// are in the signed-in group.
struct SessionController: Sendable {
    let configuration: ReviewWebConfiguration
    let sessions: SessionStore
    let throttle: LoginThrottle
    let pages: Pages

    func publicRoutes() -> RouteCollection<ReviewRequestContext> {
        let routes = RouteCollection(context: ReviewRequestContext.self)
        routes.get("/assets/app.css") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "public, max-age=3600"],
                body: .init(byteBuffer: ByteBuffer(string: Templates.css)))
        }
        routes.get("/login") { request, context in
            loginPage(
                LoginPage(error: nil, next: safeNext(request.uri.queryParameters["next"].map(String.init)), name: ""),
                context: context)
        }
        routes.post("/login") { request, context in try await login(request, context: context) }
        routes.get("/login/ticket/:ticket") { _, context in try await redeemTicket(context: context) }
        return routes
    }

    func accountRoutes() -> RouteCollection<SignedInContext> {
        let routes = RouteCollection(context: SignedInContext.self)
        routes.post("/login-links") { request, context in try await createTicket(request, context: context) }
        routes.post("/logout") { request, context in
            _ = try await pages.checkedForm(request, context: context)
            await sessions.remove(id: context.session.id)
            var response = pages.redirect("/login")
            response.setCookie(sessionCookie(value: "", maxAge: 0))
            return response
        }
        return routes
    }

    private func loginPage(
        _ page: LoginPage, context: ReviewRequestContext, status: HTTPResponse.Status = .ok
    ) -> Response {
        var page = page
        page.passwords = configuration.users != nil
        return pages.render("login", page, title: context.catalog["login.title"], context: context, status: status)
    }

    private func login(_ request: Request, context: ReviewRequestContext) async throws -> Response {
        var context = context
        try pages.checkOrigin(request, context: context)
        let form = try await Form.read(request, context: context)
        // The login page's language (its `?lang=` switch) comes back in the form.
        let language = form["lang"].flatMap(Language.init(tag:))
        if let language { context.reader = Reader(language: language) }
        let t = context.catalog
        let next = safeNext(form["next"])
        let name = form["name"] ?? ""
        let client = context.connection.clientAddress
        if let wait = await throttle.admit(client: client) {
            context.logger.notice(
                "login refused", metadata: ["login.reason": "backing off after wrong tokens", "client.address": "\(client)"])
            let seconds = Int(wait.rounded(.up))
            var response = loginPage(
                LoginPage(error: t.text("login.backing_off", ["seconds": String(seconds)]), next: next, name: name),
                context: context, status: .tooManyRequests)
            response.headers[.retryAfter] = String(seconds)
            return response
        }
        let person: String
        if let users = configuration.users {
            // The users file: the name is the one listed with the password given, not what was typed.
            guard let listed = users.authenticate(name: name, password: form["token"] ?? "") else {
                context.logger.notice(
                    "login refused", metadata: ["login.reason": "wrong name or password", "client.address": "\(client)"])
                return loginPage(
                    LoginPage(error: t["login.wrong_password"], next: next, name: name), context: context,
                    status: .unauthorized)
            }
            await throttle.recordSuccess(client: client)
            person = listed
        } else {
            guard constantTimeEquals(form["token"] ?? "", configuration.token.value) else {
                context.logger.notice("login refused", metadata: ["login.reason": "wrong token", "client.address": "\(client)"])
                return loginPage(
                    LoginPage(error: t["login.wrong_token"], next: next, name: name), context: context, status: .unauthorized)
            }
            await throttle.recordSuccess(client: client)
            if let problem = Self.nameProblem(name, t) {
                return loginPage(LoginPage(error: problem, next: next, name: name), context: context, status: .badRequest)
            }
            do {
                person = try ReviewActor.validatedName(name)
            } catch {
                return loginPage(
                    LoginPage(error: t["login.name_invalid"], next: next, name: name), context: context, status: .badRequest)
            }
        }
        // A fresh session id on every login; the caller's previous session ends (no fixation).
        if let previous = request.cookies[ReviewSite.cookieName]?.value, !previous.isEmpty {
            await sessions.remove(id: previous)
        }
        let session = await sessions.create(name: person, language: language)
        context.logger.info("logged in", metadata: ["review.actor": "\(person)", "client.address": "\(client)"])
        var response = pages.redirect(next)
        response.setCookie(sessionCookie(value: session.id, maxAge: Int(configuration.sessionIdleLifetime)))
        return response
    }

    /// The name rules (``ReviewActor/validatedName(_:)``), said in the reader's language.
    static func nameProblem(_ raw: String, _ t: Catalog) -> String? {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty { return t["login.name_required"] }
        if name.count > ReviewActor.maximumNameLength {
            return t.text("login.name_too_long", ["max": String(ReviewActor.maximumNameLength)])
        }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return t["login.name_control"]
        }
        return nil
    }

    /// A single-use link (valid 60 s) that logs another browser in as the same person, so a
    /// headless browser can be logged in without the token ever appearing in a URL or argv. The
    /// browser's session ends when this one does (its absolute lifetime is not renewed).
    private func createTicket(_ request: Request, context: SignedInContext) async throws -> Response {
        let form = try await pages.checkedForm(request, context: context)
        let ticket = await sessions.createTicket(for: context.session, next: safeNext(form["next"]))
        return Response(
            status: .created, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: "/login/ticket/\(ticket)\n")))
    }

    private func redeemTicket(context: ReviewRequestContext) async throws -> Response {
        let ticket = try context.parameters.require("ticket")
        guard let (session, next) = await sessions.redeem(ticket: ticket) else {
            return loginPage(
                LoginPage(error: context.catalog["login.link_expired"], next: "/", name: ""), context: context,
                status: .unauthorized)
        }
        var response = pages.redirect(next)
        response.setCookie(sessionCookie(value: session.id, maxAge: Int(configuration.sessionIdleLifetime)))
        return response
    }

    private func sessionCookie(value: String, maxAge: Int) -> Cookie {
        Cookie(
            name: ReviewSite.cookieName, value: value, maxAge: maxAge, path: "/", secure: configuration.secureCookies,
            httpOnly: true, sameSite: .strict)
    }
}
