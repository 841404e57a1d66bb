import AppStore
import Foundation

/// A Cloud Pub/Sub push request, as Google delivers a real-time developer notification:
/// `{"message": {"attributes", "data": "<base64>", "messageId", "publishTime"}, "subscription"}`.
/// Real envelopes carry the ids twice, also as `message_id` and `publish_time`; either is read.
///
/// The envelope is read without judging its data, so that a notification whose data is garbage
/// still has a ``messageID`` to be stored under (raw, and answered 204: Pub/Sub would redeliver
/// a refusal for days). ``notification()`` decodes the data.
public struct PubSubPushEnvelope: Hashable, Sendable {
    /// `message.messageId` (or `message_id`): the key a notification is stored once under.
    public let messageID: String
    /// `message.publishTime` (or `publish_time`), RFC 3339, as sent.
    public let publishTime: String?
    /// `message.data`, base64, as sent.
    public let data: String?
    /// `message.attributes`.
    public let attributes: [String: String]
    /// `subscription`: `projects/{project}/subscriptions/{name}`.
    public let subscription: String?

    private struct Body: Decodable {
        struct Message: Decodable {
            var data: String?
            var messageId: String?
            var message_id: String?
            var publishTime: String?
            var publish_time: String?
            var attributes: [String: String]?
        }
        var message: Message?
        var subscription: String?
    }

    /// Reads a push request's body. Throws when it is not an envelope with a message id.
    public init(body: some Collection<UInt8>) throws(PubSubEnvelopeError) {
        guard let decoded = try? JSONDecoder().decode(Body.self, from: Data(body)) else { throw .notAnEnvelope }
        guard let message = decoded.message else { throw .noMessage }
        guard let id = message.messageId ?? message.message_id, !id.isEmpty else { throw .noMessageID }
        messageID = id
        publishTime = message.publishTime ?? message.publish_time
        data = message.data
        attributes = message.attributes ?? [:]
        subscription = decoded.subscription
    }

    /// `publishTime` as a date.
    public var publishDate: Date? { GoogleTimestamp.date(publishTime) }

    /// The decoded data: a ``DeveloperNotification``, or why it is not one.
    public func notification() throws(DeveloperNotificationError) -> DeveloperNotification {
        guard let data, !data.isEmpty else { throw .noData }
        guard let bytes = decodedData else { throw .dataNotBase64 }
        return try DeveloperNotification(json: bytes)
    }

    /// `message.data` decoded from base64 (or base64url), whatever it holds; nil when it is absent
    /// or not base64.
    public var decodedData: Data? {
        guard let data, !data.isEmpty else { return nil }
        // Trimmed by bytes, as the signature of a purchase upload is (Foundation's trimming goes
        // through NSString on Linux).
        return Data(base64Encoded: data.trimmingWhitespacesAndNewlines()) ?? Base64URL.decode(data)
    }
}

/// A push request's body is not a Pub/Sub envelope.
public enum PubSubEnvelopeError: Error, Hashable, Sendable, CustomStringConvertible {
    case notAnEnvelope
    case noMessage
    case noMessageID

    /// A stable snake_case code.
    public var code: String {
        switch self {
        case .notAnEnvelope: "envelope_not_json"
        case .noMessage: "envelope_without_message"
        case .noMessageID: "envelope_without_message_id"
        }
    }

    public var description: String {
        switch self {
        case .notAnEnvelope: "the body is not a Pub/Sub push envelope (JSON)"
        case .noMessage: "the envelope has no message"
        case .noMessageID: "the envelope's message has no messageId"
        }
    }
}
