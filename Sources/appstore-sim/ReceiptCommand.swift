import AppStoreSimulator
import ArgumentParser
import Foundation

struct ReceiptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt",
        abstract: "Issue a signed receipt and print it as base64, without a running server.",
        discussion: """
            Either --request FILE (or - for standard input) with the JSON body POST /sim/receipts takes:
              {"bundle_id": "com.example.app", "environment": "Sandbox", "purchases": [{"product_id": "coins_100",
               "transaction_id": "2000000000000001", "purchase_date": "2026-11-20T10:00:00Z", "quantity": 1}]}
            or --bundle-id with one --product per purchase (bought now, ids made up).
            """
    )

    @OptionGroup var state: StateOptions

    @Option(help: "JSON file describing the receipt, - for standard input.")
    var request: String?

    @Option(name: .customLong("bundle-id"), help: "Bundle id, with --product.")
    var bundleID: String?

    @Option(help: "Production or Sandbox.")
    var environment = "Sandbox"

    @Option(name: .customLong("product"), help: "A product bought now; repeat for more purchases.")
    var products: [String] = []

    @Flag(name: .customLong("json"), help: "Also print the receipt with its filled-in ids as JSON, on standard error.")
    var json = false

    func validate() throws {
        if request == nil && bundleID == nil { throw ValidationError("give --request FILE or --bundle-id") }
        if SimulatedReceipt.Environment(lenient: environment) == nil {
            throw ValidationError("--environment must be Production or Sandbox")
        }
    }

    func run() async throws {
        let receipt: SimulatedReceipt
        if let request {
            let data =
                request == "-"
                ? FileHandle.standardInput.readDataToEndOfFile()
                : try Data(contentsOf: URL(fileURLWithPath: request))
            receipt = try JSONDecoder().decode(SimulatedReceipt.self, from: data)
        } else {
            receipt = SimulatedReceipt(
                bundleID: bundleID ?? "", environment: SimulatedReceipt.Environment(lenient: environment) ?? .sandbox,
                purchases: products.map { SimulatedReceipt.Purchase(productID: $0, purchaseDate: Date()) })
        }
        let simulator = try AppStoreSimulator(configuration: .init(stateDirectory: state.url))
        let issued = try simulator.issueReceipt(receipt)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            FileHandle.standardError.write(try encoder.encode(issued.receipt) + Data("\n".utf8))
        }
        print(issued.receiptData)
    }
}
