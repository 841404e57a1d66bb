import AsyncHTTPClient
import Foundation
import NIOCore

/// A Real-time developer notification to push (`POST /sim/play/notifications`).
public struct PlayNotificationRequest: Sendable, Codable, Hashable {
    /// What the notification is about.
    public enum Kind: String, Sendable, Codable, Hashable {
        case oneTime = "one_time"
        case subscription
        case voided
        case test
        /// `data` that is not a DeveloperNotification (seen in the wild): ``PlayNotificationRequest/data`` as is.
        case garbage
    }

    public var kind: Kind
    /// The purchase it names (not for `test` and `garbage`).
    public var purchaseToken: String?
    /// `oneTimeProductNotification` (default 1 purchased; 2 canceled) or `subscriptionNotification`
    /// (default 4 purchased; 2 renewed, 3 canceled, 12 revoked, 13 expired, …) `notificationType`.
    public var notificationType: Int?
    /// `voidedPurchaseNotification.orderId` (default: the purchase's latest void's, else latest order's).
    public var orderId: String?
    /// `voidedPurchaseNotification.refundType` (default: 2 after a partial refund, else 1).
    public var refundType: Int?
    /// Default: the purchase's package, else the first configured.
    public var packageName: String?
    /// For `garbage`: the message's `data` exactly (default base64 of `not json`).
    public var data: String?
    /// Where to push (default ``PlaySimulator/pushURL``); `?token=` is appended when ``pushToken`` is set.
    public var url: String?
    /// The push subscription's token (`RECONCILE_PLAY_PUSH_TOKEN` on the receiver's side).
    public var pushToken: String?
    /// Default a fresh one; the same id twice is a redelivery.
    public var messageId: String?

    public init(
        kind: Kind, purchaseToken: String? = nil, notificationType: Int? = nil, url: String? = nil,
        pushToken: String? = nil, messageId: String? = nil, data: String? = nil
    ) {
        self.kind = kind
        self.purchaseToken = purchaseToken
        self.notificationType = notificationType
        self.url = url
        self.pushToken = pushToken
        self.messageId = messageId
        self.data = data
    }
}

/// What was pushed and how the endpoint answered.
public struct PlayPushResult: Sendable, Codable, Hashable {
    public var messageId: String
    /// The push envelope posted.
    public var envelope: String
    /// The decoded `data`: the DeveloperNotification JSON (or the garbage as given).
    public var notification: String
    /// The endpoint's HTTP status; nil when it could not be reached.
    public var status: Int?
}

extension PlaySimulator {
    /// Pushes a notification as Cloud Pub/Sub pushes Google Play's: one POST of the push envelope,
    /// `{"message": {"attributes", "data", "messageId", "message_id", "publishTime", "publish_time"},
    /// "subscription"}` (real envelopes carry both spellings), `data` the base64 DeveloperNotification
    /// whose `eventTimeMillis` is a string (developer.android.com/google/play/billing/rtdn-reference).
    /// One attempt: Pub/Sub's redelivery of a refused push is not simulated.
    public func pushNotification(_ request: PlayNotificationRequest) async throws -> PlayPushResult {
        guard var url = request.url ?? pushURL, URL(string: url)?.host != nil else {
            throw SimulatorRequestError(description: "no push URL: give url, or PUT /sim/play/notification-url")
        }
        let notification = try developerNotification(request)
        let messageId = request.messageId ?? String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999))
        let published = PlayAPIResources.timestamp(Date().millisecondsSince1970)
        let data =
            request.kind == .garbage
            ? (request.data ?? Data("not json".utf8).base64EncodedString())
            : Data(notification.utf8).base64EncodedString()
        let envelope: [String: any Sendable] = [
            "message": [
                "attributes": [String: String](), "data": data, "messageId": messageId, "message_id": messageId,
                "publishTime": published, "publish_time": published,
            ] as [String: any Sendable],
            "subscription": "projects/appstore-sim/subscriptions/play-rtdn",
        ]
        let body = String(
            decoding: try JSONSerialization.data(
                withJSONObject: envelope, options: [.sortedKeys, .withoutEscapingSlashes]),
            as: UTF8.self)
        let shownURL = url
        if let token = request.pushToken {
            let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token
            url += (url.contains("?") ? "&" : "?") + "token=" + encoded
        }
        let status = await post(body, to: url)
        store.withLock { inner in
            inner.stats.notificationsPushed += 1
            // The URL without the push token: a secret stays out of the record.
            inner.pushes.append(PlayPushRecord(messageId: messageId, url: shownURL, body: body, status: status))
        }
        logger.info(
            "Play notification pushed",
            metadata: [
                "play.message_id": "\(messageId)", "url": "\(shownURL)",
                "status": "\(status.map { String($0) } ?? "none")",
            ])
        return PlayPushResult(
            messageId: messageId, envelope: body,
            notification: request.kind == .garbage ? data : notification, status: status)
    }

    /// The DeveloperNotification JSON for a request (empty for garbage).
    public func developerNotification(_ request: PlayNotificationRequest) throws -> String {
        if request.kind == .garbage { return "" }
        var purchase: PlaySimulatedPurchase?
        if request.kind != .test {
            guard let token = request.purchaseToken, let found = self.purchase(token) else {
                throw SimulatorRequestError(
                    description: "no purchase \(request.purchaseToken ?? "(no purchaseToken)")", status: .notFound)
            }
            purchase = found
        }
        var notification: [String: any Sendable] = [
            "version": "1.0",
            "packageName": request.packageName ?? purchase?.packageName ?? packageNames[0],
            // A string in real notifications, though the reference calls it a long.
            "eventTimeMillis": String(Date().millisecondsSince1970),
        ]
        switch request.kind {
        case .oneTime:
            guard let purchase, purchase.kind == .oneTime else {
                throw SimulatorRequestError(description: "a one_time notification names a one-time purchase")
            }
            notification["oneTimeProductNotification"] =
                [
                    "version": "1.0", "notificationType": request.notificationType ?? 1,
                    "purchaseToken": purchase.purchaseToken, "sku": purchase.productId,
                ] as [String: any Sendable]
        case .subscription:
            guard let purchase, purchase.kind == .subscription else {
                throw SimulatorRequestError(description: "a subscription notification names a subscription")
            }
            notification["subscriptionNotification"] =
                [
                    "version": "1.0", "notificationType": request.notificationType ?? 4,
                    "purchaseToken": purchase.purchaseToken, "subscriptionId": purchase.productId,
                ] as [String: any Sendable]
        case .voided:
            guard let purchase else { throw SimulatorRequestError(description: "no purchase") }
            let last = voids.last { $0.purchaseToken == purchase.purchaseToken }
            var voided: [String: any Sendable] = [
                "purchaseToken": purchase.purchaseToken,
                // 1 PRODUCT_TYPE_SUBSCRIPTION, 2 PRODUCT_TYPE_ONE_TIME.
                "productType": purchase.kind == .subscription ? 1 : 2,
                // 1 REFUND_TYPE_FULL_REFUND, 2 REFUND_TYPE_QUANTITY_BASED_PARTIAL_REFUND.
                "refundType": request.refundType ?? (last?.partial == true ? 2 : 1),
            ]
            voided["orderId"] = request.orderId ?? last?.orderId ?? Self.latestOrderID(purchase)
            notification["voidedPurchaseNotification"] = voided
        case .test:
            notification["testNotification"] = ["version": "1.0"]
        case .garbage:
            break
        }
        return String(
            decoding: try JSONSerialization.data(withJSONObject: notification, options: [.sortedKeys]), as: UTF8.self)
    }

    /// One POST; the endpoint's status, or nil when it cannot be reached within 10 s.
    private func post(_ body: String, to url: String) async -> Int? {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            _ = try? await response.body.collect(upTo: 1 << 20)
            return Int(response.status.code)
        } catch {
            logger.notice("Play notification not delivered", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
