import Foundation
import SwiftASN1

// The payload's DER codec (BER or DER in, DER out): AppReceipt+Payload.swift holds the model.

// MARK: - Decoding

extension AppReceipt.Payload {
    /// Decodes the payload from the signed content of a receipt (BER or DER).
    public init(berEncoded bytes: ArraySlice<UInt8>) throws(ReceiptParsingError) {
        self.init()
        for attribute in try AttributeCoding.decodeSet(bytes, context: "payload") {
            let value = AttributeValue(type: attribute.type, bytes: attribute.value)
            switch attribute.type {
            case 0: environment = try value.string().map(AppReceipt.Environment.init(rawValue:))
            case 1: appItemId = try value.integer()
            case 2: bundleId = try value.string()
            case 3: appVersion = try value.string()
            case 4: opaqueValue = attribute.value
            case 5: sha1Hash = attribute.value
            case 12: creationDate = try value.date()
            case 17: inAppPurchases.append(try AppReceipt.InAppPurchase(berEncoded: attribute.value[...]))
            case 18: originalPurchaseDate = try value.date()
            case 19: originalAppVersion = try value.string()
            case 21: expirationDate = try value.date()
            default: otherAttributes.append(attribute)
            }
        }
    }
}

extension AppReceipt.InAppPurchase {
    /// Decodes one in-app purchase from the value of a type-17 attribute.
    public init(berEncoded bytes: ArraySlice<UInt8>) throws(ReceiptParsingError) {
        self.init()
        for attribute in try AttributeCoding.decodeSet(bytes, context: "in-app purchase") {
            let value = AttributeValue(type: attribute.type, bytes: attribute.value)
            switch attribute.type {
            case 1701: quantity = try value.integer().map { Int($0) }
            case 1702: productId = try value.string()
            case 1703: transactionId = try value.string()
            case 1704: purchaseDate = try value.date()
            case 1705: originalTransactionId = try value.string()
            case 1706: originalPurchaseDate = try value.date()
            case 1708: expiresDate = try value.date()
            case 1711: webOrderLineItemId = try value.integer()
            case 1712: cancellationDate = try value.date()
            case 1713: isTrialPeriod = try value.integer().map { $0 != 0 }
            case 1719: isInIntroOfferPeriod = try value.integer().map { $0 != 0 }
            case 1721: promotionalOfferId = try value.string()
            default: otherAttributes.append(attribute)
            }
        }
    }
}

/// Reads the SET OF attribute SEQUENCEs shared by the payload and each in-app purchase.
enum AttributeCoding {
    static func decodeSet(_ bytes: ArraySlice<UInt8>, context: String) throws(ReceiptParsingError)
        -> [AppReceipt.Attribute]
    {
        if let attributes = decodeDERSet(bytes) { return attributes }
        return try decodeSetWithASN1(bytes, context: context)
    }

    /// The attributes of a SET in any BER swift-asn1 reads (indefinite or long lengths), with
    /// its precise errors.
    static func decodeSetWithASN1(_ bytes: ArraySlice<UInt8>, context: String) throws(ReceiptParsingError)
        -> [AppReceipt.Attribute]
    {
        let root: ASN1Node
        do {
            root = try BER.parse(bytes)
        } catch {
            throw ReceiptParsingError(asn1: error, context: context)
        }
        guard root.identifier == .set, case .constructed(let children) = root.content else {
            throw .unexpectedStructure("\(context) is \(root.identifier.typeName), not a SET of attributes")
        }
        var attributes: [AppReceipt.Attribute] = []
        for child in children {
            guard child.identifier == .sequence, case .constructed(let fields) = child.content else {
                throw .unexpectedStructure("\(context) attribute is \(child.identifier.typeName), not a SEQUENCE")
            }
            var iterator = fields.makeIterator()
            guard let typeNode = iterator.next(), let versionNode = iterator.next(),
                let valueNode = iterator.next(), iterator.next() == nil
            else {
                throw .unexpectedStructure("\(context) attribute does not have exactly three fields")
            }
            do {
                let type = try Int(berEncoded: typeNode)
                let version = try Int(berEncoded: versionNode)
                let value = try ASN1OctetString(berEncoded: valueNode)
                attributes.append(.init(type: type, version: version, value: Array(value.bytes)))
            } catch {
                throw .unexpectedStructure("\(context) attribute: \(error)")
            }
        }
        return attributes
    }

    /// The attributes of a SET in DER (definite, minimal lengths: every receipt Apple signs),
    /// read in one pass over the bytes without building a tree of reference-counted nodes; nil
    /// sends anything else to swift-asn1's parser above, which judges it.
    static func decodeDERSet(_ bytes: ArraySlice<UInt8>) -> [AppReceipt.Attribute]? {
        var outer = DERReader(bytes)
        guard let set = outer.element(tag: 0x31), outer.isAtEnd else { return nil }
        var reader = DERReader(set)
        var attributes: [AppReceipt.Attribute] = []
        while !reader.isAtEnd {
            guard let sequence = reader.element(tag: 0x30) else { return nil }
            var fields = DERReader(sequence)
            guard let type = fields.element(tag: 0x02).flatMap(DERReader.integer),
                let version = fields.element(tag: 0x02).flatMap(DERReader.integer),
                let value = fields.element(tag: 0x04), fields.isAtEnd
            else { return nil }
            attributes.append(.init(type: Int(type), version: Int(version), value: Array(value)))
        }
        return attributes
    }
}

/// Reads DER elements one after the other from a slice: the receipt payload's fast path. Only
/// what DER allows is read (a one-byte tag, a definite length in its shortest form); anything
/// else answers nil and the caller falls back to swift-asn1.
struct DERReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isAtEnd: Bool { bytes.isEmpty }

    /// The content of the next element when its tag is `tag`; nil otherwise.
    mutating func element(tag: UInt8) -> ArraySlice<UInt8>? {
        guard bytes.first == tag else { return nil }
        return next()?.content
    }

    /// The next element's identifier byte and content, whatever its tag; nil otherwise.
    mutating func next() -> (tag: UInt8, content: ArraySlice<UInt8>)? {
        var index = bytes.startIndex
        guard bytes.count >= 2 else { return nil }
        let tag = bytes[index]
        index += 1
        let lengthByte = bytes[index]
        index += 1
        var length = Int(lengthByte)
        if lengthByte >= 0x80 {
            let count = Int(lengthByte & 0x7F)
            guard (1...3).contains(count), bytes.endIndex - index >= count, bytes[index] != 0 else { return nil }
            length = 0
            for _ in 0..<count {
                length = length << 8 | Int(bytes[index])
                index += 1
            }
            guard length >= 0x80 else { return nil }
        }
        guard bytes.endIndex - index >= length else { return nil }
        let content = bytes[index..<(index + length)]
        bytes = bytes[(index + length)...]
        return (tag, content)
    }

    /// The next element's identifier byte, content and whole encoding (identifier and length
    /// included), whatever its tag; nil otherwise.
    mutating func nextElement() -> (tag: UInt8, content: ArraySlice<UInt8>, whole: ArraySlice<UInt8>)? {
        let before = bytes
        guard let (tag, content) = next() else { return nil }
        return (tag, content, before[before.startIndex..<content.endIndex])
    }

    /// Whether `content` is nothing but whole elements as ``next()`` reads them, and so is every
    /// constructed element's content down the tree: DER's framing, with one-byte tags, none of
    /// them [UNIVERSAL 0] (end-of-contents), at most 32 levels deep. swift-asn1's BER parser reads
    /// such bytes without an error (it refuses long tags given short, end-of-contents outside an
    /// indefinite length, and depths past 50); false leaves the judgement to it.
    static func holdsWholeElements(_ content: ArraySlice<UInt8>, depth: Int = 0) -> Bool {
        guard depth < 32 else { return false }
        var reader = DERReader(content)
        while !reader.isAtEnd {
            guard let (tag, inner) = reader.next(), tag & 0x1F != 0x1F, tag & 0xDF != 0 else { return false }
            if tag & 0x20 != 0, !holdsWholeElements(inner, depth: depth + 1) { return false }
        }
        return true
    }

    /// An INTEGER's content in its shortest two's complement form, at most eight bytes; nil
    /// otherwise.
    static func integer(_ content: ArraySlice<UInt8>) -> Int64? {
        guard let first = content.first, content.count <= 8 else { return nil }
        if let second = content.dropFirst().first,
            (first == 0x00 && second & 0x80 == 0) || (first == 0xFF && second & 0x80 != 0)
        {
            return nil
        }
        var value = Int64(Int8(bitPattern: first))
        for byte in content.dropFirst() { value = value << 8 | Int64(byte) }
        return value
    }
}

/// The value of one attribute, read as the type its number calls for.
private struct AttributeValue {
    var type: Int
    var bytes: [UInt8]

    /// A UTF8String or IA5String; `nil` when the attribute is empty (Apple writes `0C 00`).
    func string() throws(ReceiptParsingError) -> String? {
        guard !bytes.isEmpty else { return nil }
        if let content = shortPrimitive(of: [0x0C, 0x16, 0x13, 0x1A]) {
            guard let string = String(bytes: content, encoding: .utf8) else {
                throw .malformedAttribute(type: type, reason: "string is not valid UTF-8")
            }
            return string.isEmpty ? nil : string
        }
        let node = try parse()
        let stringTypes: [ASN1Identifier] = [.utf8String, .ia5String, .printableString, .visibleString]
        guard stringTypes.contains(node.identifier), case .primitive(let content) = node.content else {
            throw .malformedAttribute(type: type, reason: "expected a string, found \(node.identifier.typeName)")
        }
        guard let string = String(bytes: content, encoding: .utf8) else {
            throw .malformedAttribute(type: type, reason: "string is not valid UTF-8")
        }
        return string.isEmpty ? nil : string
    }

    func integer() throws(ReceiptParsingError) -> Int64? {
        guard !bytes.isEmpty else { return nil }
        if let value = shortPrimitive(of: [0x02]).flatMap(DERReader.integer) { return value }
        let node = try parse()
        do {
            return try Int64(berEncoded: node)
        } catch {
            throw .malformedAttribute(type: type, reason: "expected an INTEGER that fits 64 bits: \(error)")
        }
    }

    func date() throws(ReceiptParsingError) -> Date? {
        guard let text = try string() else { return nil }
        guard let date = ReceiptDate.parse(text) else {
            throw .malformedAttribute(type: type, reason: "\"\(text)\" is not an RFC 3339 date")
        }
        return date
    }

    /// The content of a value that is one primitive TLV with one of `tags` and a short-form
    /// length spanning exactly the value, read without building a tree: what nearly every
    /// string and integer of a receipt is. nil sends anything else to swift-asn1's parser,
    /// which judges it.
    private func shortPrimitive(of tags: [UInt8]) -> ArraySlice<UInt8>? {
        guard bytes.count >= 2, tags.contains(bytes[0]), bytes[1] < 0x80, Int(bytes[1]) == bytes.count - 2 else {
            return nil
        }
        return bytes[2...]
    }

    private func parse() throws(ReceiptParsingError) -> ASN1Node {
        do {
            return try BER.parse(bytes)
        } catch {
            throw .malformedAttribute(type: type, reason: "value is not ASN.1: \(error)")
        }
    }
}

// MARK: - Encoding

extension AppReceipt.Payload {
    /// The DER of the payload: the SET of attribute SEQUENCEs that a receipt signs.
    ///
    /// The simulator wraps this in CMS SignedData; `init(berEncoded:)` reads it back.
    public func derEncoded() throws -> [UInt8] {
        var attributes = otherAttributes
        func add(_ type: Int, _ value: [UInt8]?) { if let value { attributes.append(.init(type: type, value: value)) } }
        add(0, try environment.map { try AttributeCoding.utf8($0.rawValue) })
        add(1, try appItemId.map(AttributeCoding.integer))
        add(2, try bundleId.map(AttributeCoding.utf8))
        add(3, try appVersion.map(AttributeCoding.utf8))
        add(4, opaqueValue)
        add(5, sha1Hash)
        add(12, try creationDate.map(AttributeCoding.date))
        add(18, try originalPurchaseDate.map(AttributeCoding.date))
        add(19, try originalAppVersion.map(AttributeCoding.utf8))
        add(21, try expirationDate.map(AttributeCoding.date))
        for purchase in inAppPurchases {
            attributes.append(.init(type: 17, value: try purchase.derEncoded()))
        }
        return try AttributeCoding.encodeSet(attributes)
    }
}

extension AppReceipt.InAppPurchase {
    /// The DER of this purchase's SET of attributes (the value of a type-17 attribute).
    public func derEncoded() throws -> [UInt8] {
        var attributes = otherAttributes
        func add(_ type: Int, _ value: [UInt8]?) { if let value { attributes.append(.init(type: type, value: value)) } }
        add(1701, try quantity.map { try AttributeCoding.integer(Int64($0)) })
        add(1702, try productId.map(AttributeCoding.utf8))
        add(1703, try transactionId.map(AttributeCoding.utf8))
        add(1704, try purchaseDate.map(AttributeCoding.date))
        add(1705, try originalTransactionId.map(AttributeCoding.utf8))
        add(1706, try originalPurchaseDate.map(AttributeCoding.date))
        add(1708, try expiresDate.map(AttributeCoding.date))
        add(1711, try webOrderLineItemId.map(AttributeCoding.integer))
        add(1712, try cancellationDate.map(AttributeCoding.date))
        add(1713, try isTrialPeriod.map { try AttributeCoding.integer($0 ? 1 : 0) })
        add(1719, try isInIntroOfferPeriod.map { try AttributeCoding.integer($0 ? 1 : 0) })
        add(1721, try promotionalOfferId.map(AttributeCoding.utf8))
        return try AttributeCoding.encodeSet(attributes)
    }
}

extension AttributeCoding {
    /// An attribute as DER; `serializeSetOf` sorts these as DER requires, as Apple's receipts are.
    private struct EncodedAttribute: DERSerializable {
        var attribute: AppReceipt.Attribute
        func serialize(into coder: inout DER.Serializer) throws {
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(attribute.type)
                try coder.serialize(attribute.version)
                try coder.serialize(ASN1OctetString(contentBytes: attribute.value[...]))
            }
        }
    }

    static func encodeSet(_ attributes: [AppReceipt.Attribute]) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serializeSetOf(attributes.map(EncodedAttribute.init))
        return serializer.serializedBytes
    }

    static func utf8(_ string: String) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(ASN1UTF8String(string))
        return serializer.serializedBytes
    }

    // Apple writes dates as IA5String, not UTF8String.
    static func date(_ date: Date) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(ASN1IA5String(ReceiptDate.format(date)))
        return serializer.serializedBytes
    }

    static func integer(_ value: Int64) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(value)
        return serializer.serializedBytes
    }
}

extension ASN1Identifier {
    /// The ASN.1 type name for error messages ("INTEGER" rather than the tag dump).
    var typeName: String {
        switch self {
        case .integer: "INTEGER"
        case .octetString: "OCTET STRING"
        case .sequence: "SEQUENCE"
        case .set: "SET"
        case .utf8String: "UTF8String"
        case .ia5String: "IA5String"
        case .objectIdentifier: "OBJECT IDENTIFIER"
        case .boolean: "BOOLEAN"
        case .null: "NULL"
        default: "[\(tagClass) \(tagNumber)]"
        }
    }
}
