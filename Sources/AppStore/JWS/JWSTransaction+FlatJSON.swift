import Foundation

extension JWSTransaction {
    /// Decodes a signed transaction's payload as ``AppStoreJSON/decoder()`` does, reading the usual
    /// flat payload directly and leaving anything else to `JSONDecoder`.
    init(appStoreJSON json: [UInt8]) throws {
        if let direct = json.withUnsafeBufferPointer({ Self(flatJSON: $0) }) {
            self = direct
        } else {
            self = try AppStoreJSON.decoder().decode(Self.self, from: Data(json))
        }
    }

    private enum Field: Int {
        case transactionId, originalTransactionId, webOrderLineItemId, bundleId, productId
        case subscriptionGroupIdentifier, purchaseDate, originalPurchaseDate, expiresDate, quantity, type
        case appAccountToken, inAppOwnershipType, signedDate, revocationReason, revocationDate, revocationType
        case revocationPercentage, isUpgraded, offerType, offerIdentifier, environment, storefront, storefrontId
        case transactionReason, price, currency, offerDiscountType, appTransactionId, offerPeriod
    }

    // The synthesized Decodable's keys: the property names.
    private static let fields: [String: Field] = [
        "transactionId": .transactionId, "originalTransactionId": .originalTransactionId,
        "webOrderLineItemId": .webOrderLineItemId, "bundleId": .bundleId, "productId": .productId,
        "subscriptionGroupIdentifier": .subscriptionGroupIdentifier, "purchaseDate": .purchaseDate,
        "originalPurchaseDate": .originalPurchaseDate, "expiresDate": .expiresDate, "quantity": .quantity,
        "type": .type, "appAccountToken": .appAccountToken, "inAppOwnershipType": .inAppOwnershipType,
        "signedDate": .signedDate, "revocationReason": .revocationReason, "revocationDate": .revocationDate,
        "revocationType": .revocationType, "revocationPercentage": .revocationPercentage,
        "isUpgraded": .isUpgraded, "offerType": .offerType, "offerIdentifier": .offerIdentifier,
        "environment": .environment, "storefront": .storefront, "storefrontId": .storefrontId,
        "transactionReason": .transactionReason, "price": .price, "currency": .currency,
        "offerDiscountType": .offerDiscountType, "appTransactionId": .appTransactionId, "offerPeriod": .offerPeriod,
    ]

    /// `fields` by the bytes of their names: a member's key is matched without making a String
    /// of it.
    private static let fieldNames = DirectJSON.Keys(fields.map { ($0.key, $0.value) })

    /// The payload when it is a flat object the direct reader takes whole, with every known field
    /// of the JSON type the synthesized Decodable expects; nil sends it to `JSONDecoder`.
    init?(flatJSON json: UnsafeBufferPointer<UInt8>) {
        self.init()
        var seen: UInt64 = 0
        var unknownKeys: [String] = []
        let complete = DirectJSON.members(of: json) { name, value in
            guard let field = Self.fieldNames(name) else {
                let key = String(decoding: name, as: UTF8.self)
                // Ignored, as JSONDecoder ignores them; a repeated key is left to JSONDecoder.
                guard !unknownKeys.contains(key) else { return false }
                unknownKeys.append(key)
                return true
            }
            let bit: UInt64 = 1 << field.rawValue
            guard seen & bit == 0 else { return false }
            seen |= bit
            return self.set(field, to: value)
        }
        guard complete else { return nil }
    }

    private mutating func set(_ field: Field, to value: DirectJSON.Value) -> Bool {
        if case .null = value { return true }  // decodeIfPresent reads null as absent
        switch field {
        case .transactionId: return Self.string(value, into: &transactionId)
        case .originalTransactionId: return Self.string(value, into: &originalTransactionId)
        case .webOrderLineItemId: return Self.string(value, into: &webOrderLineItemId)
        case .bundleId: return Self.string(value, into: &bundleId)
        case .productId: return Self.string(value, into: &productId)
        case .subscriptionGroupIdentifier: return Self.string(value, into: &subscriptionGroupIdentifier)
        case .offerIdentifier: return Self.string(value, into: &offerIdentifier)
        case .storefront: return Self.string(value, into: &storefront)
        case .storefrontId: return Self.string(value, into: &storefrontId)
        case .currency: return Self.string(value, into: &currency)
        case .appTransactionId: return Self.string(value, into: &appTransactionId)
        case .offerPeriod: return Self.string(value, into: &offerPeriod)
        case .purchaseDate: return Self.date(value, into: &purchaseDate)
        case .originalPurchaseDate: return Self.date(value, into: &originalPurchaseDate)
        case .expiresDate: return Self.date(value, into: &expiresDate)
        case .signedDate: return Self.date(value, into: &signedDate)
        case .revocationDate: return Self.date(value, into: &revocationDate)
        case .quantity: return Self.integer(value, into: &quantity)
        case .revocationPercentage: return Self.integer(value, into: &revocationPercentage)
        case .price:
            guard case .integer(let number) = value else { return false }
            price = number
        case .revocationReason:
            guard case .integer(let number) = value else { return false }
            revocationReason = RevocationReason(rawValue: Int(number))
        case .offerType:
            guard case .integer(let number) = value else { return false }
            offerType = OfferType(rawValue: Int(number))
        case .isUpgraded:
            guard case .bool(let flag) = value else { return false }
            isUpgraded = flag
        case .appAccountToken:
            // Foundation's UUID decodes from its string form and refuses anything else.
            guard let text = value.string, let uuid = UUID(uuidString: text) else { return false }
            appAccountToken = uuid
        case .type: return Self.raw(value, into: &type)
        case .inAppOwnershipType: return Self.raw(value, into: &inAppOwnershipType)
        case .revocationType: return Self.raw(value, into: &revocationType)
        case .environment: return Self.raw(value, into: &environment)
        case .transactionReason: return Self.raw(value, into: &transactionReason)
        case .offerDiscountType: return Self.raw(value, into: &offerDiscountType)
        }
        return true
    }

    private static func string(_ value: DirectJSON.Value, into target: inout String?) -> Bool {
        guard let text = value.string else { return false }
        target = text
        return true
    }

    private static func raw<T: RawRepresentable>(_ value: DirectJSON.Value, into target: inout T?) -> Bool
    where T.RawValue == String {
        guard let text = value.string, let raw = T(rawValue: text) else { return false }
        target = raw
        return true
    }

    private static func integer(_ value: DirectJSON.Value, into target: inout Int?) -> Bool {
        guard case .integer(let number) = value else { return false }
        target = Int(number)
        return true
    }

    /// Epoch milliseconds, with the range ``AppStoreJSON/decoder()`` accepts; a whole number of
    /// milliseconds becomes the same `Date` either way.
    private static func date(_ value: DirectJSON.Value, into target: inout Date?) -> Bool {
        guard case .integer(let milliseconds) = value, abs(milliseconds) < 1_000_000_000_000_000 else { return false }
        target = Date(millisecondsSince1970: milliseconds)
        return true
    }
}
