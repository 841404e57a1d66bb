import Foundation
import SwiftASN1

/// A StoreKit 1 app receipt: a PKCS#7 (CMS) SignedData whose content is the receipt payload.
///
/// Parsing only reads the structure; it proves nothing. Use
/// ``verifySignature(trustRoots:at:requireAppleExtensions:)`` to check that Apple signed it.
public struct AppReceipt: Sendable, Hashable {
    /// The largest receipt (in bytes, after base64 decoding) the parser reads.
    ///
    /// Real receipts with hundreds of purchases are around 100 KB; anything past this is not a
    /// receipt and parsing it would only cost memory.
    public static let maximumSize = 4 * 1024 * 1024

    /// The decoded payload: bundle id, environment, dates and in-app purchases.
    public let payload: Payload
    /// The exact bytes that were signed (the encapsulated content).
    public let signedContent: [UInt8]
    /// The certificates embedded in the SignedData, as DER, in the order they appear.
    public let certificates: [[UInt8]]
    /// The signers of the SignedData (Apple uses exactly one).
    let signerInfos: [SignerInfo]

    /// Decodes a base64 receipt as uploaded by a client (whitespace and line breaks are ignored).
    public init(base64Encoded text: String) throws(ReceiptParsingError) {
        try self.init(berEncoded: ReceiptBase64.decode(text, limit: Self.maximumSize))
    }

    /// Decodes a receipt from its BER/DER bytes.
    public init(berEncoded bytes: [UInt8]) throws(ReceiptParsingError) {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= Self.maximumSize else { throw .tooLarge(size: bytes.count, limit: Self.maximumSize) }
        let signedData = try SignedData(contentInfo: bytes)
        self.signedContent = signedData.content
        self.certificates = signedData.certificates
        self.signerInfos = signedData.signerInfos
        self.payload = try Payload(berEncoded: Self.unwrapNestedOctetString(signedData.content)[...])
    }

    /// The in-app purchases of the receipt (shorthand for `payload.inAppPurchases`).
    public var inAppPurchases: [InAppPurchase] { payload.inAppPurchases }

    // Some producers wrap the payload SET in one more OCTET STRING inside the eContent; read
    // through it rather than reject the receipt.
    private static func unwrapNestedOctetString(_ content: [UInt8]) throws(ReceiptParsingError) -> [UInt8] {
        guard content.first == 0x04 || content.first == 0x24 else { return content }
        do {
            return Array(try ASN1OctetString(berEncoded: BER.parse(content)).bytes)
        } catch {
            throw ReceiptParsingError(asn1: error, context: "nested OCTET STRING")
        }
    }
}

/// The parts of a CMS SignedData that receipt handling needs (RFC 5652 §5).
///
/// swift-certificates parses CMS only behind internal types, so the container is read here with
/// swift-asn1's BER parser, which accepts Apple's indefinite lengths and non-minimal lengths.
struct SignedData: Equatable {
    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]

    var content: [UInt8]
    var certificates: [[UInt8]]
    var signerInfos: [SignerInfo]

    init(content: [UInt8], certificates: [[UInt8]], signerInfos: [SignerInfo]) {
        self.content = content
        self.certificates = certificates
        self.signerInfos = signerInfos
    }

    init(contentInfo bytes: [UInt8]) throws(ReceiptParsingError) {
        // The usual DER (every App Store receipt, the simulator's) is read directly: swift-asn1's
        // tree of the whole container, certificates included, was a third of parsing a receipt.
        if let direct = Self.decodeDER(bytes) {
            self = direct
            return
        }
        self = try Self.decodeWithASN1(bytes)
    }

    /// The SignedData by swift-asn1's parser alone: what ``init(contentInfo:)`` gives or throws
    /// whenever ``decodeDER(_:)`` gives nothing.
    static func decodeWithASN1(_ bytes: [UInt8]) throws(ReceiptParsingError) -> SignedData {
        let root = try Self.parseContainer(bytes)
        do {
            return try Self.decode(root)
        } catch let error as ReceiptParsingError {
            throw error
        } catch {
            throw ReceiptParsingError(asn1: error, context: "PKCS#7 SignedData")
        }
    }

    /// `06 09 2A 86 48 86 F7 0D 01 07 01`'s content: the content type data, as DER writes it.
    private static let dataOIDContent: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]

    /// The SignedData read straight from DER, field by field as ``decode(_:)`` reads swift-asn1's
    /// nodes, for bytes ``isDERSignedData(_:)`` takes (so swift-asn1 would parse them without an
    /// error). Nil for anything else and for any field not in its usual form (a constructed
    /// OCTET STRING, primitive certificates, a SignerInfo ``SignerInfo/init(node:)`` refuses):
    /// ``decodeWithASN1(_:)`` then decides, with its own errors. Only the small signerInfos SET
    /// goes through swift-asn1, for ``SignerInfo/init(node:)``.
    static func decodeDER(_ bytes: [UInt8]) -> SignedData? {
        guard isDERSignedData(bytes) else { return nil }
        var outer = DERReader(bytes[...])
        guard let contentInfo = outer.element(tag: 0x30) else { return nil }
        var info = DERReader(contentInfo)
        // The content type, signedData (isDERSignedData compared it byte for byte), then [0] EXPLICIT.
        guard info.element(tag: 0x06) != nil, let explicit = info.element(tag: 0xA0) else { return nil }
        var wrapped = DERReader(explicit)
        guard let signedData = wrapped.element(tag: 0x30) else { return nil }
        var fields = DERReader(signedData)
        guard fields.element(tag: 0x02) != nil, fields.element(tag: 0x31) != nil,
            let encapsulated = fields.element(tag: 0x30)
        else { return nil }
        var encapsulatedFields = DERReader(encapsulated)
        guard let type = encapsulatedFields.element(tag: 0x06), type.elementsEqual(dataOIDContent),
            let attached = encapsulatedFields.element(tag: 0xA0)
        else { return nil }
        var attachedReader = DERReader(attached)
        guard let content = attachedReader.element(tag: 0x04) else { return nil }

        var certificates: [[UInt8]] = []
        var next = fields.nextElement()
        if let field = next, field.tag == 0xA0 {
            var reader = DERReader(field.content)
            while let certificate = reader.nextElement() { certificates.append(Array(certificate.whole)) }
            next = fields.nextElement()
        }
        // CRLs ([1]): receipts carry none, and revocation is not checked offline.
        if let field = next, field.tag == 0xA1 || field.tag == 0x81 { next = fields.nextElement() }
        guard let signerSet = next, signerSet.tag == 0x31,
            let node = try? BER.parse(Array(signerSet.whole)), case .constructed(let signerNodes) = node.content,
            let signerInfos = try? signerNodes.map(SignerInfo.init(node:))
        else { return nil }
        return SignedData(content: Array(content), certificates: certificates, signerInfos: signerInfos)
    }

    /// Only what the full parse finds wrong before the SignedData's fields: data that is not BER
    /// or runs past its end, or a ContentInfo that is not signedData. Throws the same errors.
    static func checkContainer(_ bytes: [UInt8]) throws(ReceiptParsingError) {
        // The job checks every receipt it sends to verifyReceipt: the usual DER (every App Store
        // receipt, the simulator's) is read directly, without swift-asn1's tree of nodes.
        if isDERSignedData(bytes) { return }
        try checkContainerWithASN1(bytes)
    }

    /// ``checkContainer(_:)`` by swift-asn1's parser alone.
    static func checkContainerWithASN1(_ bytes: [UInt8]) throws(ReceiptParsingError) {
        let root = try parseContainer(bytes)
        do {
            _ = try signedDataFields(root)
        } catch let error as ReceiptParsingError {
            throw error
        } catch {
            throw ReceiptParsingError(asn1: error, context: "PKCS#7 SignedData")
        }
    }

    /// `06 09 2A 86 48 86 F7 0D 01 07 02`: the content type signedData, as DER writes it.
    private static let signedDataOIDElement: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]

    /// Whether `bytes` are one ContentInfo SEQUENCE in DER's framing
    /// (``DERReader/holdsWholeElements(_:depth:)``) whose content type is signedData's OID byte
    /// for byte: what ``checkContainerWithASN1(_:)`` accepts without an error.
    static func isDERSignedData(_ bytes: [UInt8]) -> Bool {
        var reader = DERReader(bytes[...])
        guard let contentInfo = reader.element(tag: 0x30), reader.isAtEnd else { return false }
        return contentInfo.starts(with: signedDataOIDElement) && DERReader.holdsWholeElements(contentInfo, depth: 1)
    }

    private static func parseContainer(_ bytes: [UInt8]) throws(ReceiptParsingError) -> ASN1Node {
        do {
            return try BER.parse(bytes)
        } catch {
            throw ReceiptParsingError(asn1: error, context: "PKCS#7")
        }
    }

    /// The ContentInfo's checks; what follows its content type.
    private static func signedDataFields(_ root: ASN1Node) throws -> ASN1NodeCollection.Iterator {
        guard root.identifier == .sequence, case .constructed(let outer) = root.content else {
            throw ReceiptParsingError.notAReceipt("ASN.1 \(root.identifier.typeName) is not a PKCS#7 ContentInfo")
        }
        var contentInfo = outer.makeIterator()
        guard let typeNode = contentInfo.next(), typeNode.identifier == .objectIdentifier else {
            throw ReceiptParsingError.notAReceipt("ContentInfo has no content type")
        }
        let contentType = try ASN1ObjectIdentifier(berEncoded: typeNode)
        guard contentType == signedDataOID else {
            throw ReceiptParsingError.notAReceipt("content type \(contentType) is not signedData")
        }
        return contentInfo
    }

    private static func decode(_ root: ASN1Node) throws -> SignedData {
        var contentInfo = try signedDataFields(root)
        guard let explicit = contentInfo.next(),
            explicit.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific),
            case .constructed(let wrapped) = explicit.content,
            let signedDataNode = wrapped.first(where: { _ in true }),
            signedDataNode.identifier == .sequence,
            case .constructed(let fields) = signedDataNode.content
        else {
            throw ReceiptParsingError.unexpectedStructure("signedData content is missing")
        }

        var iterator = fields.makeIterator()
        guard let versionNode = iterator.next(), versionNode.identifier == .integer,
            let digestAlgorithms = iterator.next(), digestAlgorithms.identifier == .set,
            let encapsulated = iterator.next(), encapsulated.identifier == .sequence
        else {
            throw ReceiptParsingError.unexpectedStructure("SignedData lacks version, digests or content")
        }
        let content = try encapsulatedContent(encapsulated)

        var certificates: [[UInt8]] = []
        var next = iterator.next()
        if let node = next, node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
            if case .constructed(let certificateNodes) = node.content {
                certificates = certificateNodes.map { Array($0.encodedBytes) }
            }
            next = iterator.next()
        }
        if let node = next, node.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific) {
            next = iterator.next()  // CRLs: receipts carry none, and revocation is not checked offline.
        }
        guard let signerSet = next, signerSet.identifier == .set, case .constructed(let signerNodes) = signerSet.content
        else {
            throw ReceiptParsingError.unexpectedStructure("SignedData has no signerInfos")
        }
        let signerInfos = try signerNodes.map(SignerInfo.init(node:))
        return SignedData(content: content, certificates: certificates, signerInfos: signerInfos)
    }

    private static func encapsulatedContent(_ node: ASN1Node) throws -> [UInt8] {
        guard case .constructed(let fields) = node.content else {
            throw ReceiptParsingError.unexpectedStructure("encapContentInfo is not a SEQUENCE")
        }
        var iterator = fields.makeIterator()
        guard let typeNode = iterator.next() else {
            throw ReceiptParsingError.unexpectedStructure("encapContentInfo has no content type")
        }
        let type = try ASN1ObjectIdentifier(berEncoded: typeNode)
        guard type == [1, 2, 840, 113_549, 1, 7, 1] else {
            throw ReceiptParsingError.unexpectedStructure("encapsulated content type \(type) is not data")
        }
        guard let explicit = iterator.next(),
            explicit.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific),
            case .constructed(let wrapped) = explicit.content,
            let octets = wrapped.first(where: { _ in true })
        else {
            throw ReceiptParsingError.unexpectedStructure("receipt has no attached content")
        }
        // Xcode writes the content as a constructed (chunked) OCTET STRING; swift-asn1 joins the chunks.
        return Array(try ASN1OctetString(berEncoded: octets).bytes)
    }
}

/// One CMS SignerInfo (RFC 5652 §5.3), kept raw until a signature check needs it.
struct SignerInfo: Sendable, Hashable {
    enum Identifier: Sendable, Hashable {
        case issuerAndSerialNumber(issuer: [UInt8], serialNumber: [UInt8])
        case subjectKeyIdentifier([UInt8])
    }

    var identifier: Identifier
    var digestAlgorithm: ASN1ObjectIdentifier
    /// The `[0] IMPLICIT` signed attributes as encoded, when present.
    var signedAttributes: [UInt8]?
    var signatureAlgorithm: ASN1ObjectIdentifier
    var signature: [UInt8]

    init(node: ASN1Node) throws {
        guard node.identifier == .sequence, case .constructed(let fields) = node.content else {
            throw ReceiptParsingError.unexpectedStructure("SignerInfo is not a SEQUENCE")
        }
        var iterator = fields.makeIterator()
        guard iterator.next()?.identifier == .integer, let sid = iterator.next() else {
            throw ReceiptParsingError.unexpectedStructure("SignerInfo lacks version or signer identifier")
        }
        switch sid.identifier {
        case .sequence:
            guard case .constructed(let parts) = sid.content else {
                throw ReceiptParsingError.unexpectedStructure("issuerAndSerialNumber is empty")
            }
            var partIterator = parts.makeIterator()
            guard let issuer = partIterator.next(), let serial = partIterator.next(),
                serial.identifier == .integer, case .primitive(let serialBytes) = serial.content
            else {
                throw ReceiptParsingError.unexpectedStructure("issuerAndSerialNumber is malformed")
            }
            identifier = .issuerAndSerialNumber(issuer: Array(issuer.encodedBytes), serialNumber: Array(serialBytes))
        case ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific):
            guard case .primitive(let keyIdentifier) = sid.content else {
                throw ReceiptParsingError.unexpectedStructure("subjectKeyIdentifier is malformed")
            }
            identifier = .subjectKeyIdentifier(Array(keyIdentifier))
        default:
            throw ReceiptParsingError.unexpectedStructure("unknown signer identifier \(sid.identifier.typeName)")
        }

        guard let digest = iterator.next() else {
            throw ReceiptParsingError.unexpectedStructure("SignerInfo lacks a digest algorithm")
        }
        digestAlgorithm = try Self.algorithm(digest)

        var next = iterator.next()
        signedAttributes = nil
        if let node = next, node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
            signedAttributes = Array(node.encodedBytes)
            next = iterator.next()
        }
        guard let signatureAlgorithmNode = next, let signatureNode = iterator.next() else {
            throw ReceiptParsingError.unexpectedStructure("SignerInfo lacks its signature")
        }
        signatureAlgorithm = try Self.algorithm(signatureAlgorithmNode)
        signature = Array(try ASN1OctetString(berEncoded: signatureNode).bytes)
    }

    private static func algorithm(_ node: ASN1Node) throws -> ASN1ObjectIdentifier {
        guard node.identifier == .sequence, case .constructed(let parts) = node.content,
            let oid = parts.first(where: { _ in true })
        else {
            throw ReceiptParsingError.unexpectedStructure("AlgorithmIdentifier is malformed")
        }
        return try ASN1ObjectIdentifier(berEncoded: oid)
    }
}

extension ReceiptParsingError {
    /// Maps a swift-asn1 error to the case that tells an operator what is wrong with the upload.
    init(asn1 error: any Error, context: String) {
        if let parsing = error as? ReceiptParsingError {
            self = parsing
        } else if let asn1 = error as? ASN1Error {
            switch asn1.code {
            case .truncatedASN1Field: self = .truncated
            case .unexpectedFieldType: self = .unexpectedStructure("\(context): \(asn1)")
            default:
                self = context == "PKCS#7" ? .notAReceipt("not ASN.1 (\(asn1.code))") : .unexpectedStructure("\(context): \(asn1)")
            }
        } else {
            self = .unexpectedStructure("\(context): \(error)")
        }
    }
}

/// Strict base64 for receipts: standard alphabet, whitespace ignored, padding optional.
enum ReceiptBase64 {
    static func decode(_ text: String, limit: Int) throws(ReceiptParsingError) -> [UInt8] {
        // Four base64 characters carry three bytes; allow some whitespace before refusing.
        let textLimit = limit / 3 * 4 + 4096 + limit / 16
        guard text.utf8.count <= textLimit else {
            throw .tooLarge(size: text.utf8.count / 4 * 3, limit: limit)
        }
        var compact = [UInt8]()
        compact.reserveCapacity(text.utf8.count)
        for byte in text.utf8 where !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D) {
            compact.append(byte)
        }
        guard !compact.isEmpty else { throw .empty }
        while compact.count % 4 != 0 { compact.append(UInt8(ascii: "=")) }
        guard let data = Data(base64Encoded: Data(compact)) else { throw .notBase64 }
        guard data.count <= limit else { throw .tooLarge(size: data.count, limit: limit) }
        return Array(data)
    }
}
