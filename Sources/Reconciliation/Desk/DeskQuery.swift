import Foundation
import Postgres

/// What support staff start from (SPEC sections 13 and 18): an Apple order ID from the invoice
/// e-mail or a Google Play order id (`GPA.…`), a transaction id, the app's account id, or an app
/// account token.
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
            // Apple's transaction ids are digits; a Google Play order id (`GPA.…`) is Play's.
            if let play = Self.playOrderID(trimmed) {
                self.value = play
                break
            }
            guard trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw .invalidQuery("\(trimmed) is not a transaction id (digits only)")
            }
            self.value = trimmed
        case .order:
            if trimmed.uppercased().hasPrefix("GPA.") {
                guard let play = Self.playOrderID(trimmed) else {
                    throw .invalidQuery(
                        "\(trimmed) is not a Google Play order ID "
                            + "(GPA. then digits and dashes, like GPA.3312-5678-9012-34567)")
                }
                self.value = play
                break
            }
            guard trimmed.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw .invalidQuery("\(trimmed) is not an Apple order ID (letters and digits, like MK5TTY6V5X)")
            }
            self.value = trimmed.uppercased()
        case .user:
            self.value = trimmed
        }
        self.kind = kind
    }

    /// Which store the query's order or transaction id is of: a `GPA.` order id is Google Play's
    /// (SPEC section 18); every other query is the App Store's (an account or a token is both's).
    public var store: Store {
        value.hasPrefix("GPA.") && (kind == .order || kind == .transaction) ? .googlePlay : .appStore
    }

    /// A Google Play order id as typed (`GPA.` whatever its case, then digits, dashes and a
    /// renewal's `..N`), spelt as Google does; nil when it is not one.
    static func playOrderID(_ text: String) -> String? {
        guard text.uppercased().hasPrefix("GPA."), text.count > 4 else { return nil }
        let rest = text.dropFirst(4)
        guard rest.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-" || $0 == ".") }), rest.first?.isNumber == true
        else { return nil }
        return "GPA." + rest
    }

    /// What one search field holds, recognised from its shape: a UUID is a token, `GPA.` and
    /// digits a Google Play order id, digits a transaction id, ten to twelve capitals and digits
    /// with a letter (`MK5TTY6V5X`) an order ID,
    /// anything else an account id. The field holds at most ``maximumLength`` bytes (the web's
    /// search box); a longer account id is looked up by kind (`reconcile lookup --user`).
    public static func recognising(_ text: String) throws(DeskError) -> DeskQuery {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count <= maximumLength else {
            throw .invalidQuery("a search must be 1 to \(maximumLength) bytes without control characters")
        }
        if UUID(uuidString: trimmed) != nil { return try DeskQuery(.token, trimmed) }
        // A Google Play order id (`GPA.3312-5678-9012-34567`, from Google's receipt e-mail).
        if playOrderID(trimmed) != nil { return try DeskQuery(.order, trimmed) }
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
    /// A Google Play order id neither stored nor in the ledger needs `orders.get`, which needs
    /// Play's service account (exit 64).
    case orderNeedsPlayAPI
    /// Google could not answer now (exit 1).
    case googleUnanswered(String)
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
        case .orderNeedsPlayAPI:
            "a Google Play order ID the job does not hold can only be looked up with Google's Orders API (orders.get), "
                + "which needs a service account (GOOGLE_PLAY_SERVICE_ACCOUNT_FILE); "
                + "look the customer up by --user instead"
        case .googleUnanswered(let reason): "Google did not answer the lookup: \(reason); try again shortly"
        }
    }
}
