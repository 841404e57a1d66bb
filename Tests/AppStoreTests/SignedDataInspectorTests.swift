import AppStoreSimulator
import Foundation
import Testing

@testable import AppStore

/// `reconcile inspect`'s verification: JWS, notification bodies and offline receipts.
@Suite struct SignedDataInspectorTests {
    let simulator: AppStoreSimulator
    var inspector: SignedDataInspector { SignedDataInspector(trustedRoots: TrustedRoots([simulator.ca.root])) }

    init() throws {
        simulator = try AppStoreSimulator(configuration: .init())
    }

    @Test func inputsAreToldApartByShape() {
        #expect(SignedDataInspector.kind(of: "eyJh.eyJi.c2ln\n") == .jws)
        #expect(SignedDataInspector.kind(of: #"  {"signedPayload":"a.b.c"}"#) == .notificationBody)
        #expect(SignedDataInspector.kind(of: "MIIT+AYJKoZIhvcNAQcCoIIT6TCCE+UCAQEx") == .receipt)
    }

    @Test func aSignedTransactionVerifiesAndPrintsApplesFieldNames() async throws {
        let created = try simulator.createTransaction(
            SimulatedTransaction(productId: "coins_100", purchaseDate: Date(timeIntervalSince1970: 1_762_000_000)))
        guard case .valid(.transaction(let transaction)) = await inspector.inspectSignedData(created.signedTransaction)
        else {
            Issue.record("expected a valid transaction")
            return
        }
        #expect(transaction.transactionId == created.transactionId)
        let json = try #require(
            try JSONSerialization.jsonObject(with: SignedDataInspector.Inspected.transaction(transaction).json())
                as? [String: Any])
        #expect(json["transactionId"] as? String == created.transactionId)
        #expect((json["purchaseDate"] as? NSNumber)?.int64Value == 1_762_000_000_000)
        #expect(json["productId"] as? String == "coins_100")
    }

    @Test func aNotificationBodyVerifiesWithItsNestedTransaction() async throws {
        let created = try simulator.createTransaction(SimulatedTransaction(productId: "coins_100"))
        let body = try simulator.signNotification(type: .oneTimeCharge, transactionId: created.transactionId)
        let text = String(decoding: try JSONEncoder().encode(body), as: UTF8.self)
        guard case .valid(let inspected) = await inspector.inspectSignedData(text),
            case .notification(let notification) = inspected
        else {
            Issue.record("expected a valid notification")
            return
        }
        #expect(notification.payload.notificationType == .oneTimeCharge)
        #expect(notification.transaction?.transactionId == created.transactionId)
        let json = try #require(try JSONSerialization.jsonObject(with: inspected.json()) as? [String: Any])
        #expect(
            (json["notification"] as? [String: Any])?["notificationUUID"] as? String == notification.notificationUUID)
        #expect((json["transactionInfo"] as? [String: Any])?["transactionId"] as? String == created.transactionId)
        // A bare signedPayload is a notification too.
        guard case .valid(.notification) = await inspector.inspectSignedData(body.signedPayload) else {
            Issue.record("expected the bare signedPayload to verify")
            return
        }
    }

    @Test func untrustedOrForeignDataIsInvalidWithAReason() async throws {
        let created = try simulator.createTransaction(SimulatedTransaction(productId: "coins_100"))
        guard case .invalid(let reason) = await SignedDataInspector().inspectSignedData(created.signedTransaction)
        else {
            Issue.record("a simulator JWS must not verify against Apple's roots")
            return
        }
        #expect(reason.contains("certificate chain not trusted"))

        let strict = SignedDataInspector(trustedRoots: TrustedRoots([simulator.ca.root]), bundleIds: ["com.other"])
        #expect(
            await strict.inspectSignedData(created.signedTransaction)
                == .invalid("bundle id com.example.coins not accepted"))
        #expect(
            await inspector.inspectSignedData(#"{"nothing":1}"#)
                == .invalid("a JSON object without signedPayload is not a notification body"))
    }

    @Test func aReceiptIsParsedAndItsChainCheckedOffline() async throws {
        let issued = try simulator.issueReceipt(.sample(.production))
        guard case .valid(.receipt(let receipt)) = await inspector.inspectReceipt(issued.receiptData) else {
            Issue.record("expected the receipt to verify against the simulator root")
            return
        }
        #expect(receipt.bundleID == "com.example.coins")
        #expect(Set(receipt.inApp.map(\.transactionID)) == ["2000000000000001", "2000000000000002"])
        guard case .invalid(let reason) = await SignedDataInspector().inspectReceipt(issued.receiptData) else {
            Issue.record("a simulator receipt must not verify against Apple's roots")
            return
        }
        #expect(reason.hasPrefix("receipt signature"))
    }

    @Test func applesRealSandboxDataVerifiesAgainstTheBundledRoots() async throws {
        let apple = SignedDataInspector()
        let jws = try Vectors.text("sk2/real-sandbox-consumable-transaction.app_store_server_api.jws")
        guard case .valid(.transaction(let transaction)) = await apple.inspectSignedData(jws) else {
            Issue.record("expected Apple's sandbox transaction to verify")
            return
        }
        #expect(transaction.transactionId == "2000000847061981")
        #expect(transaction.price == 230_000)
        #expect(transaction.currency == "JPY")

        let renewal = try Vectors.text("sk2/real-sandbox-renewalInfo.go-iap.jws")
        guard case .valid(.renewalInfo(let info)) = await apple.inspectSignedData(renewal) else {
            Issue.record("expected Apple's sandbox renewal info to verify")
            return
        }
        #expect(info.originalTransactionId == "2000000335310644")

        let body = try Vectors.text("sk2/real-sandbox-TEST-notification.signedPayload.json")
        guard case .valid(.notification(let notification)) = await apple.inspectSignedData(body) else {
            Issue.record("expected Apple's TEST notification to verify")
            return
        }
        #expect(notification.payload.notificationType == .test)

        let xcode = try Vectors.text("sk2/xcode-signed-transaction.jws")
        #expect(await apple.inspectSignedData(xcode) == .invalid("environment Xcode not accepted"))
    }
}
