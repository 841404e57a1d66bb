import Foundation
import Postgres

/// What support staff start from (SPEC section 13): an Apple order ID from the invoice e-mail, a
/// transaction id, the app's account id, or an app account token.
public struct DeskQuery: Sendable, Codable, Equatable {
    /// Which of the four a query is.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case order
        case transaction
        case user
        case token
    }

    /// What the value is.
    public var kind: Kind
    /// The order ID, transaction id, user id or token, as typed (trimmed).
    public var value: String

    /// The longest order ID, transaction id or token accepted: all are far shorter.
    public static let maximumLength = 256
    /// The longest account id accepted: the app's ledger and uploads may hold ids of kilobytes,
    /// and the desk finds what a run reported about them.
    public static let maximumUserLength = 16_384

    /// A query; `DeskError.invalidQuery` when the value is empty, too long, or not what `kind` says.
    public init(_ kind: Kind, _ value: String) throws(DeskError) {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        let limit = kind == .user ? Self.maximumUserLength : Self.maximumLength
        guard !trimmed.isEmpty, trimmed.utf8.count <= limit,
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw .invalidQuery("a \(kind.rawValue) must be 1 to \(limit) bytes without control characters")
        }
        switch kind {
        case .token:
            guard let token = UUID(uuidString: trimmed) else {
                throw .invalidQuery("\(trimmed) is not an app account token (a UUID)")
            }
            self.value = token.uuidString.lowercased()
        case .transaction:
            guard trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw .invalidQuery("\(trimmed) is not a transaction id (digits only)")
            }
            self.value = trimmed
        case .order:
            guard trimmed.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw .invalidQuery("\(trimmed) is not an Apple order ID (letters and digits, like MK5TTY6V5X)")
            }
            self.value = trimmed.uppercased()
        case .user:
            self.value = trimmed
        }
        self.kind = kind
    }

    /// What one search field holds, recognised from its shape: a UUID is a token, digits are a
    /// transaction id, ten to twelve capitals and digits with a letter (`MK5TTY6V5X`) an order ID,
    /// anything else an account id. The field holds at most ``maximumLength`` bytes (the web's
    /// search box); a longer account id is looked up by kind (`reconcile lookup --user`).
    public static func recognising(_ text: String) throws(DeskError) -> DeskQuery {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count <= maximumLength else {
            throw .invalidQuery("a search must be 1 to \(maximumLength) bytes without control characters")
        }
        if UUID(uuidString: trimmed) != nil { return try DeskQuery(.token, trimmed) }
        if !trimmed.isEmpty, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) {
            return try DeskQuery(.transaction, trimmed)
        }
        if (10...12).contains(trimmed.count),
            trimmed.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }),
            trimmed.contains(where: \.isLetter)
        {
            return try DeskQuery(.order, trimmed)
        }
        return try DeskQuery(.user, trimmed)
    }
}

/// Why a lookup could not be answered.
public enum DeskError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The query is malformed (exit 64).
    case invalidQuery(String)
    /// An order ID needs Look Up Order ID, which needs Server API credentials (exit 64).
    case orderNeedsServerAPI
    /// Apple could not answer now, or answered with signatures that do not verify (exit 1).
    case appleUnanswered(String)

    public var description: String {
        switch self {
        case .invalidQuery(let reason): "invalid lookup: \(reason)"
        case .orderNeedsServerAPI:
            "an order ID can only be looked up with Apple's Look Up Order ID, which needs App Store Server API "
                + "credentials (APPSTORE_KEY_ID, APPSTORE_ISSUER_ID, APPSTORE_PRIVATE_KEY_FILE); look the customer up "
                + "by --transaction, --user or --token instead"
        case .appleUnanswered(let reason): "Apple did not answer the lookup: \(reason); try again shortly"
        }
    }
}
