import AppStoreSimulator
import AppStoreTestSupport
import Foundation
import PropertyBased
import Testing
import X509

@testable import AppStore

/// How many inputs each property draws. Fixed, so that `swift test` takes a bounded time;
/// `PROPERTY_ITERATIONS=100000 swift test --filter Property` hunts longer.
enum PropertyBudget {
    static let iterations: Int = {
        guard let text = ProcessInfo.processInfo.environment["PROPERTY_ITERATIONS"], let count = Int(text), count > 0
        else { return 300 }
        return count
    }()
}

/// One random edit of a byte string: what a bit flip on the wire, a buggy client or an attacker
/// makes of a genuine receipt or token.
struct Mutation: CustomStringConvertible, Sendable {
    var kind: Int
    var position: Int
    var byte: UInt8
    var length: Int

    static let kinds = 0...6

    var description: String {
        let name = ["flip", "set", "insert", "delete", "truncate", "duplicate", "flip3"][kind]
        return "\(name) at \(position) byte 0x\(String(byte, radix: 16)) length \(length)"
    }

    func apply(to original: [UInt8]) -> [UInt8] {
        var bytes = original
        guard !bytes.isEmpty else { return [byte] }
        let at = position % bytes.count
        switch kind {
        case 0: bytes[at] ^= 1 << (byte % 8)
        case 1: bytes[at] = byte
        case 2: bytes.insert(byte, at: at)
        case 3: bytes.removeSubrange(at..<min(bytes.count, at + length))
        case 4: bytes.removeSubrange(at...)
        case 5: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + length)], at: at)
        default:
            for step in 0..<3 {
                bytes[(at + step * 7919 * length) % bytes.count] ^= 1 << ((Int(byte) + step) % 8)
            }
        }
        return bytes
    }
}

/// Runs `check` on `PropertyBudget.iterations` random edits of one of `originals` (its index given).
func propertyCheckEdits(
    of originals: [[UInt8]], sourceLocation: SourceLocation = #_sourceLocation,
    _ check: (_ edited: [UInt8], _ original: Int, _ mutation: Mutation) async throws -> Void
) async {
    let (kind, position, byte, length) = PropertyTests.mutation
    await propertyCheck(
        count: PropertyBudget.iterations, input: Gen.int(in: 0...(originals.count - 1)), kind, position, byte, length,
        perform: { index, kind, position, byte, length in
            let mutation = Mutation(kind: kind, position: position, byte: byte, length: length)
            try await check(mutation.apply(to: originals[index]), index, mutation)
        }, sourceLocation: sourceLocation)
}

/// Property-based tests over what clients send: the receipt parser and the JWS verifier never
/// crash on any input, reject with their own error type, and no edit of signed data verifies
/// unless it left every signed byte as it was.
@Suite("Properties of the receipt parser and the JWS verifier")
struct PropertyTests {
    static let mutation = (
        Gen.int(in: Mutation.kinds), Gen.int(in: 0...Int(Int32.max)), Gen<UInt8>.value(in: 0...255),
        Gen.int(in: 1...16)
    )

    /// Genuine receipts: Apple's (checked at their creation date against Apple Inc. Root) and one
    /// of the simulator's (DER, P-256), with the roots that verify each.
    static func genuineReceipts() async throws -> [(bytes: [UInt8], receipt: AppReceipt, roots: TrustedRoots)] {
        let apple = TrustedRoots([try Vectors.certificate("AppleIncRootCertificate.cer")])
        var receipts: [(bytes: [UInt8], receipt: AppReceipt, roots: TrustedRoots)] = []
        for facts in ReceiptFacts.all {
            let bytes = Array(try #require(Data(base64Encoded: try Vectors.text("receipts/\(facts.file)"),
                                                options: .ignoreUnknownCharacters)))
            receipts.append((bytes, try AppReceipt(berEncoded: bytes), apple))
        }
        let sim = try AppStoreSimulator(configuration: .init())
        let issued = try sim.issueReceipt(SimulatedReceipt(
            bundleID: "com.example.coins", environment: .production,
            purchases: [.init(productID: "coins.100", transactionID: "1000000000000001", purchaseDate: Date())]))
        let bytes = Array(try #require(Data(base64Encoded: issued.receiptData)))
        receipts.append((bytes, try AppReceipt(berEncoded: bytes), TrustedRoots([sim.ca.root])))
        for genuine in receipts {
            guard case .valid = await genuine.receipt.verifySignature(trustRoots: genuine.roots) else {
                throw TestFailure("a genuine receipt does not verify: the property would prove nothing")
            }
        }
        return receipts
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Receipts

    @Test func arbitraryBytesAreParsedOrRejectedWithAReason() async {
        // A PKCS#7 SignedData prefix half the time, so that the input gets past the first checks.
        let prefix: [UInt8] = [0x30, 0x80, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02, 0xA0, 0x80]
        await propertyCheck(
            count: PropertyBudget.iterations, input: Gen<UInt8>.value(in: 0...255).array(of: 0...600), Gen.bool
        ) { tail, prefixed in
            let bytes = prefixed ? prefix + tail : tail
            do throws(ReceiptParsingError) {
                let receipt = try AppReceipt(berEncoded: bytes)
                // Random bytes that parse are still not signed by anyone the job trusts.
                #expect(await receipt.verifySignature().isValid == false)
            } catch {
                #expect(!error.description.isEmpty)
            }
            do throws(ReceiptParsingError) {
                _ = try Receipt(base64Encoded: Data(bytes).base64EncodedString())
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
    }

    @Test func arbitraryTextIsParsedOrRejectedWithAReason() async {
        let alphabet = Array("ABCDEFMIIT0123456789+/=abcxyz \n\t-_.{}\"\u{0}é🎉\u{FFFD}")
        await propertyCheck(count: PropertyBudget.iterations, input: Gen.element(of: alphabet).array(of: 0...400)) {
            characters in
            do throws(ReceiptParsingError) {
                _ = try Receipt(base64Encoded: String(characters.compactMap { $0 }))
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
    }

    /// The rule `ReceiptPayloadCheck` applied by parsing every receipt whole: what its cheaper
    /// reading must still decide.
    static func payloadCheckByFullParse(_ upload: String) -> ReceiptPayloadCheck.Result {
        let compact = ReceiptPayloadCheck.compacted(upload)
        do {
            _ = try Receipt(base64Encoded: compact)
        } catch {
            switch error {
            case .empty, .notBase64, .tooLarge, .notAReceipt:
                return .rejected("\(error)")
            case .truncated where ReceiptPayloadCheck.containerIsCut(compact):
                return .rejected("receipt is truncated: its PKCS#7 container ends before the length it announces")
            case .truncated, .unexpectedStructure, .malformedAttribute:
                break
            }
        }
        return .acceptable(compact)
    }

    @Test func theVerifyReceiptPayloadCheckDecidesAsAFullParseWould() async throws {
        let receipts = try await Self.genuineReceipts()
        let (kind, position, byte, length) = Self.mutation
        await propertyCheck(
            count: PropertyBudget.iterations, input: Gen.int(in: 0...(receipts.count - 1)), kind, position, byte, length,
            Gen.bool
        ) { index, kind, position, byte, length, asText in
            let mutation = Mutation(kind: kind, position: position, byte: byte, length: length)
            // Edits of the bytes (what PKCS#7 parsing meets) or of the base64 text (what base64 meets).
            let upload = asText
                ? String(decoding: mutation.apply(to: Array(Data(receipts[index].bytes).base64EncodedString().utf8)), as: UTF8.self)
                : Data(mutation.apply(to: receipts[index].bytes)).base64EncodedString()
            #expect(ReceiptPayloadCheck.check(upload) == Self.payloadCheckByFullParse(upload), "\(mutation)")
        }
    }

    /// The container check's DER path (`SignedData.isDERSignedData`) accepts only what swift-asn1's
    /// parser accepts too: a mutation it still takes is one the full check takes.
    @Test func aContainerTheDERPathAcceptsIsOneSwiftASN1Accepts() async throws {
        await propertyCheckEdits(of: try await Self.genuineReceipts().map(\.bytes)) { bytes, _, mutation in
            guard SignedData.isDERSignedData(bytes) else { return }
            do throws(ReceiptParsingError) {
                try SignedData.checkContainerWithASN1(bytes)
            } catch {
                Issue.record("the DER path took what swift-asn1 refuses (\(error)): \(mutation)")
            }
        }
    }

    @Test func aMutatedReceiptNeverVerifiesWithOtherContent() async throws {
        let genuine = try await Self.genuineReceipts()
        let (kind, position, byte, length) = Self.mutation
        await propertyCheck(
            count: PropertyBudget.iterations, input: Gen.int(in: 0...(genuine.count - 1)), kind, position, byte, length
        ) { index, kind, position, byte, length in
            let mutation = Mutation(kind: kind, position: position, byte: byte, length: length)
            let original = genuine[index]
            let receipt: AppReceipt
            do throws(ReceiptParsingError) {
                receipt = try AppReceipt(berEncoded: mutation.apply(to: original.bytes))
            } catch {
                #expect(!error.description.isEmpty)
                return
            }
            guard await receipt.verifySignature(trustRoots: original.roots).isValid else { return }
            // Only an edit outside what was signed (a version number, an unused length form)
            // may still verify: the content Apple signed must be exactly the original's.
            #expect(receipt.signedContent == original.receipt.signedContent, "\(mutation) changed signed content")
            #expect(receipt.payload == original.receipt.payload, "\(mutation) changed the payload")
        }
    }

    // MARK: JWS

    static func verifier(_ ca: TestCertificateAuthority) -> SignedDataVerifier {
        SignedDataVerifier(configuration: .init(trustedRoots: ca.roots, bundleIds: ["com.example.coins"]))
    }

    @Test func arbitraryStringsNeverVerify() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = Self.verifier(ca)
        let alphabet = Array("eyJhbGciOiJFUzI1NiJ9ABCxyz019-_.=+/ {}\":,\u{0}\u{7F}é🎉")
        await propertyCheck(count: PropertyBudget.iterations, input: Gen.element(of: alphabet).array(of: 0...300)) {
            characters in
            let token = String(characters.compactMap { $0 })
            #expect(await verifier.verifyTransaction(token).payload == nil)
            #expect(await verifier.verifyNotificationBody(token).payload == nil)
            #expect(await verifier.verifyRenewalInfo(token).payload == nil)
            _ = try? UnverifiedJWS.decodePayload(token, as: JWSTransaction.self)
        }
    }

    @Test func wellFormedTokensWithForgedPartsNeverVerify() async throws {
        let ca = try TestCertificateAuthority()
        let stranger = try TestCertificateAuthority()
        let verifier = Self.verifier(ca)
        let payloadJSON = try AppStoreJSON.encoder().encode(JWSTransaction.sample())
        // Headers that pass the algorithm and chain checks, and ones that do not.
        let headers: [Data] = [
            try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": try ca.x5c]),
            try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": try stranger.x5c]),
            try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": [try ca.x5c[0], try stranger.x5c[1], try ca.x5c[2]]]),
            try JSONSerialization.data(withJSONObject: ["alg": "none", "x5c": try ca.x5c]),
            try JSONSerialization.data(withJSONObject: ["alg": "HS256"]),
        ]
        let bytes = Gen<UInt8>.value(in: 0...255)
        await propertyCheck(
            count: PropertyBudget.iterations, input: Gen.int(in: 0...(headers.count - 1)), Gen.bool,
            bytes.array(of: 0...200), bytes.array(of: 60...68)
        ) { header, genuinePayload, randomPayload, signature in
            let token = JWSText.base64URL(headers[header]) + "."
                + JWSText.base64URL(genuinePayload ? payloadJSON : Data(randomPayload)) + "." + JWSText.base64URL(signature)
            #expect(await verifier.verifyTransaction(token).payload == nil, "a random signature verified")
        }
    }

    @Test func aMutatedTokenNeverVerifiesWithOtherContent() async throws {
        let ca = try TestCertificateAuthority()
        let verifier = Self.verifier(ca)
        let token = try ca.sign(JWSTransaction.sample())
        #expect(await verifier.verifyTransaction(token).payload == JWSTransaction.sample())
        let original = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let (kind, position, _, length) = Self.mutation
        let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ").map(\.asciiValue!)
        await propertyCheck(
            count: PropertyBudget.iterations, input: kind, position, Gen.element(of: characters), length
        ) { kind, position, character, length in
            // Edits of the text, in the token's own alphabet (and a few characters outside it).
            let mutation = Mutation(kind: kind == 0 ? 1 : kind, position: position, byte: character ?? 0x41, length: length)
            let mutated = String(decoding: mutation.apply(to: Array(token.utf8)), as: UTF8.self)
            guard let verified = await verifier.verifyTransaction(mutated).payload else { return }
            // Only the signature's spare base64 bits may change: header and payload text are what
            // is signed, and the signature must decode to the same bytes.
            let parts = mutated.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            #expect(Array(parts.prefix(2)) == Array(original.prefix(2)), "\(mutation) verified with another header or payload")
            #expect(parts.count == 3 && Base64URL.decode(Array(parts[2].utf8)) == Base64URL.decode(Array(original[2].utf8)),
                    "\(mutation) verified with another signature")
            #expect(verified == JWSTransaction.sample())
        }
    }
}

extension ReceiptSignatureResult {
    var isValid: Bool {
        if case .valid = self { true } else { false }
    }
}

extension PropertyTests {
    /// Reading the SignedData straight from DER (`SignedData.decodeDER`) gives exactly what
    /// swift-asn1's tree gives, whenever it gives anything; otherwise the tree decides.
    @Test func theSignedDataReadFromDERIsTheOneSwiftASN1Reads() async throws {
        let genuine = try await Self.genuineReceipts().map(\.bytes)
        for bytes in genuine {
            let direct = try #require(SignedData.decodeDER(bytes), "a genuine DER receipt left the DER path")
            #expect(direct == (try SignedData.decodeWithASN1(bytes)))
        }
        // Every byte of the fields before the content and of the signerInfos at the end, each
        // changed in four ways: the fields the DER path reads itself, which random edits of a
        // receipt of several KB seldom reach.
        for original in genuine {
            let positions = Array(0..<min(96, original.count)) + Array(max(0, original.count - 400)..<original.count)
            for position in positions {
                for mask: UInt8 in [0x01, 0x20, 0x80, 0xFF] {
                    var bytes = original
                    bytes[position] ^= mask
                    Self.expectTheDERPathAgrees(bytes, "byte \(position) ^ \(mask)")
                }
            }
        }
        await propertyCheckEdits(of: genuine) { bytes, _, mutation in
            Self.expectTheDERPathAgrees(bytes, "\(mutation)")
        }
    }

    /// Whatever the DER path reads from `bytes` is what swift-asn1's tree reads.
    static func expectTheDERPathAgrees(_ bytes: [UInt8], _ edit: String) {
        guard let direct = SignedData.decodeDER(bytes) else { return }
        do throws(ReceiptParsingError) {
            #expect(direct == (try SignedData.decodeWithASN1(bytes)), "\(edit)")
        } catch {
            Issue.record("the DER path read what swift-asn1 refuses (\(error)): \(edit)")
        }
    }
}
