import AppStore
import Foundation
@testable import Reconciliation
import Testing

/// The policy file (SPEC section 17): YAML or JSON, every key and code checked, every refusal with
/// the line, the key and why.
@Suite("Policy files")
struct PolicyFileTests {
    /// SPEC section 17's example, as an operator would write it.
    static let example = """
        rules:
          - name: routine-small-pack
            when:
              kind: [missed_delivery]                      # required
              product: [com.example.coins60]
              max_amount: {CNY: 30, USD: 5}
              environment: production
              sources: [server_api, jws]
              buyer_basis: [app_account_token]
              no_open: [wrong_account, shared_receipt, unverified_delivery]
            limits:
              per_account_per_day: {items: 3, amount: {CNY: 100}}
              per_run: {amount: {CNY: 5000}}
            decide: granted
            note: routine small pack confirmed by Apple
          - name: sandbox-noise
            when: {kind: environment_mismatch}
            decide: dismissed
            note: a tester's purchase
        """

    static let exampleRule = PolicyRule(
        name: "routine-small-pack", line: 2,
        conditions: .init(
            kinds: [.missedDelivery], products: ["com.example.coins60"],
            maxAmountMilli: ["CNY": 30_000, "USD": 5_000], environment: .production, sources: [.serverAPI, .jws],
            buyerBasis: [.appAccountToken], noOpen: [.wrongAccount, .sharedReceipt, .unverifiedDelivery]),
        limits: .init(
            perAccountPerDay: .init(items: 3, amountMilli: ["CNY": 100_000]), perRun: .init(amountMilli: ["CNY": 5_000_000])),
        decision: .resolve(.granted), note: "routine small pack confirmed by Apple")

    @Test func theSpecExampleReadsAsItSays() throws {
        let file = try PolicyFile.parse(Self.example)
        #expect(file.rules.count == 2)
        #expect(file.rules[0] == Self.exampleRule)
        #expect(file.rules[0].actor.name == "policy:routine-small-pack")
        #expect(file.rules[1].conditions.kinds == [.environmentMismatch] && file.rules[1].decision == .dismiss)
        #expect(file.rules[1].line == 16)
    }

    @Test func jsonReadsTheSameAndKeepsItsLines() throws {
        let json = """
            {
              "rules": [
                {
                  "name": "routine-small-pack",
                  "when": {
                    "kind": ["missed_delivery"],
                    "product": ["com.example.coins60"],
                    "max_amount": {"CNY": 30, "USD": 5},
                    "environment": "production",
                    "sources": ["server_api", "jws"],
                    "buyer_basis": ["app_account_token"],
                    "no_open": ["wrong_account", "shared_receipt", "unverified_delivery"]
                  },
                  "limits": {"per_account_per_day": {"items": 3, "amount": {"CNY": 100}},
                             "per_run": {"amount": {"CNY": 5000}}},
                  "decide": "granted",
                  "note": "routine small pack confirmed by Apple"
                }
              ]
            }
            """
        var rule = try PolicyFile.parse(json).rules[0]
        #expect(rule.line == 3)
        rule.line = 2
        #expect(rule == Self.exampleRule)
        let wrong = json.replacingOccurrences(of: "\"sources\"", with: "\"source\"")
        #expect(throws: PolicyFileError(
            file: "policy file", line: 10, key: "rules[0].when.source",
            why: "unknown key; expected one of kind, product, max_amount, environment, sources, buyer_basis, no_open, store")
        ) { try PolicyFile.parse(wrong) }
        let broken = json.replacingOccurrences(of: "\"granted\",", with: "\"granted\"")
        let error = try #require(throws: PolicyFileError.self) { try PolicyFile.parse(broken) }
        #expect(error.line == 17 && error.why.hasPrefix("not valid YAML or JSON"), "\(error)")
    }

    /// One mistake per line of the table: the line, the key and why, as `policy check` prints them.
    @Test(arguments: [
        ("rules:\n  - name: a\n    when: {kind: missed_delivery}\n    decide: granted\n    note: x\n    colour: red\n",
         6, "rules[0].colour", "unknown key"),
        ("rules:\n  - name: a\n    when: {kind: missed_delivry}\n    decide: granted\n    note: x\n",
         3, "rules[0].when.kind", "missed_delivry is not a finding kind; expected one of missed_delivery"),
        ("rules:\n  - name: a\n    when: {product: [x]}\n    decide: granted\n    note: x\n",
         3, "rules[0].when", "rules[0].when.kind is required"),
        ("rules:\n  - name: a\n    when:\n      kind: [missed_delivery]\n      max_amount: {CNY: 6.5001}\n    decide: granted\n    note: x\n",
         5, "rules[0].when.max_amount.CNY", "6.5001 is not an amount"),
        ("rules:\n  - name: a\n    when:\n      kind: [missed_delivery]\n      max_amount: {yuan: 6}\n    decide: granted\n    note: x\n",
         5, "rules[0].when.max_amount.yuan", "not a currency"),
        ("rules:\n  - name: a\n    when:\n      kind: [missed_delivery]\n      max_amount: {CNY: -6}\n    decide: granted\n    note: x\n",
         5, "rules[0].when.max_amount.CNY", "-6 is not an amount"),
        ("rules:\n  - name: a\n    when:\n      kind: [missed_delivery]\n      sources: [receipt]\n    decide: granted\n    note: x\n",
         5, "rules[0].when.sources[0]", "receipt is not a source; expected one of verify_receipt, local_receipt, jws"),
        ("rules:\n  - name: a\n    when:\n      kind: [missed_delivery]\n      buyer_basis: token\n    decide: granted\n    note: x\n",
         5, "rules[0].when.buyer_basis", "token is not a buyer basis"),
        ("rules:\n  - name: a\n    when:\n      kind: [missed_delivery]\n      environment: Xcode\n    decide: granted\n    note: x\n",
         5, "rules[0].when.environment", "Xcode is not an environment"),
        ("rules:\n  - name: a\n    when:\n      kind: [missed_delivery]\n      store: app_gallery\n    decide: granted\n    note: x\n",
         5, "rules[0].when.store", "app_gallery is not a store; expected one of app_store, google_play"),
        ("rules:\n  - name: a\n    when: {kind: [wrong_account]}\n    decide: granted\n    note: x\n",
         4, "rules[0].decide", "granted fits only kinds whose suggested action is grant (missed_delivery); wrong_account's is move"),
        ("rules:\n  - name: a\n    when: {kind: [missed_delivery]}\n    decide: revoked\n    note: x\n",
         4, "rules[0].decide", "revoked fits only kinds whose suggested action is revoke"),
        ("rules:\n  - name: a\n    when: {kind: [missed_delivery]}\n    decide: moved\n    note: x\n",
         4, "rules[0].decide", "moved is not a decision; expected granted, revoked, no_action, dismissed"),
        ("rules:\n  - name: a\n    when: {kind: [missed_delivery]}\n    decide: granted\n    note: \"  \"\n",
         5, "rules[0].note", "expected a note"),
        ("rules:\n  - name: a\n    when: {kind: [missed_delivery]}\n    decide: granted\n",
         2, "rules[0]", "rules[0].note is required"),
        ("rules:\n  - name: a b\n    when: {kind: [missed_delivery]}\n    decide: granted\n    note: x\n",
         2, "rules[0].name", "a b is not a rule name"),
        ("rules:\n  - name: a\n    when: {kind: [missed_delivery]}\n    decide: granted\n    note: x\n"
            + "  - name: a\n    when: {kind: [missed_delivery]}\n    decide: no_action\n    note: y\n",
         6, "rules[1].name", "a is already the name of the rule on line 2"),
        ("rules:\n  - name: a\n    when: {kind: [missed_delivery]}\n    limits:\n      per_run: {items: 0}\n    decide: granted\n    note: x\n",
         5, "rules[0].limits.per_run.items", "0 is not a number of items"),
        ("rules:\n  - name: a\n    when: {kind: [missed_delivery]}\n    limits:\n      per_day: {items: 3}\n    decide: granted\n    note: x\n",
         5, "rules[0].limits.per_day", "unknown key; expected one of per_account_per_day, per_run"),
        ("rules:\n  - name: a\n    when: {kind: [missed_delivery]}\n    limits:\n      per_run: {}\n    decide: granted\n    note: x\n",
         5, "rules[0].limits.per_run", "expected items, amount or both"),
        ("rules:\n  - name: a\n    when: {kind: [missed_delivery], kind: [refunded_delivery]}\n    decide: granted\n    note: x\n",
         3, "kind", "given twice in one mapping"),
        ("rules:\n  - name: a\n    when: {kind: [missed_delivery]\n    decide: granted\n", 4, "", "not valid YAML or JSON"),
        ("rule:\n  - name: a\n", 1, "rule", "unknown key; expected one of rules"),
        ("rules: {name: a}\n", 1, "rules", "expected a list of rules"),
        ("", 1, "", "the file is empty"),
    ] as [(String, Int, String, String)])
    func aMistakeIsNamedByLineKeyAndWhy(_ text: String, line: Int, key: String, why: String) {
        let error = #expect(throws: PolicyFileError.self) { try PolicyFile.parse(text, file: "p.yaml") }
        #expect(error?.line == line, "\(String(describing: error))")
        #expect(error?.key == key, "\(String(describing: error))")
        #expect(error?.why.hasPrefix(why) == true || error?.why.contains(why) == true, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("p.yaml:\(line): ") == true, "\(String(describing: error))")
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: PolicyFileError(file: "/nonexistent/p.yaml", line: nil, key: "", why: "no such readable file")) {
            try PolicyFile.load(path: "/nonexistent/p.yaml")
        }
    }

    /// The SQL that counts a policy's decisions names its actors by the prefix the rules use.
    @Test func theStatementsCountThePoliciesActors() throws {
        for path in ["policy/counts.sql", "policy/decided.sql"] {
            let text = try #require(SQLFile.text(path))
            #expect(text.contains("'\(PolicyRule.actorPrefix)%'"), "sql/\(path)")
        }
        #expect(throws: ReviewError.self) { try ReviewActor.validatedName("Policy:routine") }
    }

    @Test func majorUnitsAreExact() {
        #expect(Money(milli: 30_000, currency: "CNY").majorUnitsJSON == "30")
        #expect(Money(milli: 6_500, currency: "CNY").majorUnitsJSON == "6.5")
        #expect(Money(milli: 1, currency: "KWD").majorUnitsJSON == "0.001")
    }
}
