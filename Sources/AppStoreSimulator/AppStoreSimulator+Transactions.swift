import AppStore
import Foundation
import Hummingbird
import NIOCore

/// The simulator could not do what an admin request asked.
public struct SimulatorRequestError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var description: String
    /// The HTTP status to answer with.
    var status: HTTPResponse.Status = .badRequest
}

extension AppStoreSimulator {
    /// The bundle id of transactions created without one.
    public static let defaultBundleID = "com.example.coins"

    // MARK: - In process (tests) and behind the admin endpoints

    /// Creates a purchase, stores it for the Server API, and returns it signed with its ids.
    public func createTransaction(_ request: SimulatedTransaction) throws -> CreatedTransaction {
        let id = request.transactionId ?? state.nextTransactionID()
        guard transactions.entry(id) == nil else {
            throw SimulatorRequestError(description: "transaction \(id) exists", status: .conflict)
        }
        // Whole milliseconds, as Apple's JSON carries, so that what a test set is what it reads back.
        func exact(_ date: Date?) -> Date? { date.map { Date(millisecondsSince1970: $0.millisecondsSince1970) } }
        let purchased = exact(request.purchaseDate) ?? exact(Date())!

        var transaction = JWSTransaction()
        transaction.transactionId = id
        transaction.originalTransactionId = request.originalTransactionId ?? id
        transaction.bundleId = request.bundleId ?? Self.defaultBundleID
        transaction.productId = request.productId
        transaction.type = request.type ?? .consumable
        transaction.quantity = request.quantity ?? 1
        transaction.purchaseDate = purchased
        transaction.originalPurchaseDate = exact(request.originalPurchaseDate) ?? purchased
        transaction.expiresDate = exact(request.expiresDate)
        transaction.appAccountToken = request.appAccountToken
        transaction.inAppOwnershipType = request.inAppOwnershipType ?? .purchased
        transaction.environment = request.environment ?? .production
        transaction.storefront = request.storefront ?? "USA"
        transaction.storefrontId = "143441"
        transaction.transactionReason = .purchase
        transaction.price = request.price
        transaction.currency = request.currency ?? (request.price == nil ? nil : "USD")
        transaction.revocationDate = exact(request.revocationDate)
        transaction.revocationReason = request.revocationReason ?? (request.revocationDate == nil ? nil : .other)

        let customer = request.customer ?? "customer-\(id)"
        transaction.appTransactionId = Self.appTransactionID(customer: customer)
        let orderId = request.orderId ?? Self.orderID()
        transactions.insert(transaction, customer: customer, orderId: orderId)
        state.countTransactionCreated()
        return try created(id)
    }

    /// Refunds a transaction (sets `revocationDate`, `revocationReason` and `revocationType`). A
    /// prorated refund (`REFUND_PRORATED`) carries `percentage`, milliunits of the whole quantity
    /// (33333 for 1 of 3); any other type carries none.
    public func refundTransaction(
        _ id: String, reason: RevocationReason = .other, date: Date? = nil, type: RevocationType = .refundFull,
        percentage: Int? = nil
    ) throws -> CreatedTransaction {
        let date = Date(millisecondsSince1970: (date ?? Date()).millisecondsSince1970)
        if type == .refundProrated {
            guard let percentage, (1...100_000).contains(percentage) else {
                throw SimulatorRequestError(
                    description: "a REFUND_PRORATED refund needs revocationPercentage between 1 and 100000")
            }
        }
        guard
            transactions.update(
                id,
                {
                    $0.revocationDate = date
                    $0.revocationReason = reason
                    $0.revocationType = type
                    $0.revocationPercentage = type == .refundProrated ? percentage : nil
                }) != nil
        else {
            throw SimulatorRequestError(description: "no transaction \(id)", status: .notFound)
        }
        return try created(id)
    }

    /// Reverses a refund (`REFUND_REVERSED`): the transaction is paid again.
    public func reverseRefund(_ id: String) throws -> CreatedTransaction {
        let updated = transactions.update(id) {
            $0.revocationDate = nil
            $0.revocationReason = nil
            $0.revocationType = nil
            $0.revocationPercentage = nil
        }
        guard updated != nil else {
            throw SimulatorRequestError(description: "no transaction \(id)", status: .notFound)
        }
        return try created(id)
    }

    /// Signs a Server Notification V2 about a transaction: the body Apple would POST, with a
    /// fresh `notificationUUID` and the transaction (as it is now) nested, signed. It is kept for
    /// Get Notification History, sent successfully or, with `delivered` false, missed by the
    /// app's endpoint — or, when the simulator has a notification URL (``poster``), posted there
    /// as Apple would, each attempt recorded. `signedDate` backdates it (a refund request older than 12 hours).
    public func signNotification(
        type: NotificationType, subtype: NotificationSubtype? = nil, transactionId: String, delivered: Bool = true,
        signedDate: Date? = nil
    ) throws -> SignedNotificationBody {
        guard let entry = transactions.entry(transactionId) else {
            throw SimulatorRequestError(description: "no transaction \(transactionId)", status: .notFound)
        }
        var data = NotificationData()
        data.bundleId = entry.transaction.bundleId
        data.environment = entry.transaction.environment
        data.appAppleId = entry.transaction.environment == .production ? configuration.appAppleId : nil
        data.bundleVersion = "1"
        data.signedTransactionInfo = try sign(entry)
        var payload = NotificationPayload()
        payload.notificationType = type
        payload.subtype = subtype
        payload.notificationUUID = UUID().uuidString.lowercased()
        payload.version = "2.0"
        let madeAt = signedDate ?? Date()
        let signed = signedDate.map { Date(millisecondsSince1970: $0.millisecondsSince1970) }
            ?? transactions.nextSignedDate(now: madeAt)
        payload.signedDate = signed
        payload.data = data
        state.countNotificationCreated()
        let body = SignedNotificationBody(signedPayload: try ca.signJWS(payload))
        let uuid = payload.notificationUUID ?? ""
        let environment = entry.transaction.environment ?? .production
        // With a notification URL the attempts are real posts, recorded as they happen; without
        // one, `delivered` says what Apple's attempts were (its last failed too when undelivered).
        let url = poster.url
        let results = url != nil ? [] : delivered ? [SendAttempt.success] : ["TIMED_OUT", "NO_RESPONSE"]
        notifications.record(
            SimulatorNotificationLog.Sent(
                signedPayload: body.signedPayload, notificationUUID: uuid, signedDate: signed, madeAt: madeAt,
                notificationType: type, transactionId: transactionId, environment: environment,
                bundleId: entry.transaction.bundleId ?? Self.defaultBundleID,
                sendAttempts: results.enumerated().map { index, result in
                    SendAttempt(
                        attemptDate: signed.addingTimeInterval(Double(index) * 3600), sendAttemptResult: result)
                }))
        if let url { poster.post(body, uuid: uuid, environment: environment, to: url) }
        return body
    }

    private func created(_ id: String) throws -> CreatedTransaction {
        guard let entry = transactions.entry(id) else {
            throw SimulatorRequestError(description: "no transaction \(id)", status: .notFound)
        }
        return CreatedTransaction(
            transactionId: id, originalTransactionId: entry.transaction.originalTransactionId ?? id,
            orderId: entry.orderId, customer: entry.customer, signedTransaction: try sign(entry))
    }

    /// One app download per customer: Apple's `appTransactionId` is the same for every transaction
    /// of one Apple ID and app. Digits, like Apple's, derived from the customer (FNV-1a).
    static func appTransactionID(customer: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in customer.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return "70" + String(hash % 10_000_000_000_000_000)
    }

    /// Apple's order ids look like `MK5TTTVWJH`.
    private static func orderID() -> String {
        let letters = Array("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789")
        return "M" + String((0..<9).map { _ in letters.randomElement()! })
    }

    // MARK: - Admin endpoints

    private struct RefundRequest: Decodable {
        var revocationReason: RevocationReason?
        var revocationDate: Date?
        var revocationType: RevocationType?
        var revocationPercentage: Int?
    }

    private struct NotificationRequest: Decodable {
        var notificationType: NotificationType
        var subtype: NotificationSubtype?
        var transactionId: String
        var delivered: Bool?
    }

    func addTransactionAdminRoutes(to router: Router<BasicRequestContext>) {
        let simulator = self
        router.post("sim/transactions") { request, _ in
            await Self.admin(request) { body in
                try simulator.createTransaction(AppStoreJSON.decoder().decode(SimulatedTransaction.self, from: body))
            }
        }
        router.post("sim/transactions/:id/refund") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await Self.admin(request) { body in
                let refund = body.isEmpty ? nil : try AppStoreJSON.decoder().decode(RefundRequest.self, from: body)
                return try simulator.refundTransaction(
                    id, reason: refund?.revocationReason ?? .other, date: refund?.revocationDate,
                    type: refund?.revocationType ?? .refundFull, percentage: refund?.revocationPercentage)
            }
        }
        router.post("sim/transactions/:id/reverse") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await Self.admin(request) { _ in try simulator.reverseRefund(id) }
        }
        router.post("sim/notifications") { request, _ in
            await Self.admin(request) { body in
                let asked = try JSONDecoder().decode(NotificationRequest.self, from: body)
                return try simulator.signNotification(
                    type: asked.notificationType, subtype: asked.subtype, transactionId: asked.transactionId,
                    delivered: asked.delivered ?? true)
            }
        }
    }

    /// Runs an admin action on the request body; errors become JSON with a 4xx status.
    private static func admin<T: Encodable>(_ request: Request, _ action: (Data) throws -> T) async -> Response {
        do {
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            return json(encoding: try action(Data(body.readableBytesView)))
        } catch let error as SimulatorRequestError {
            return json(["error": error.description], status: error.status)
        } catch {
            return json(["error": "\(error)"], status: .badRequest)
        }
    }
}
