@testable import Reconciliation
import Testing

/// Each kind's contract against SPEC section 5's table (severity, suggested action) and
/// section 6 (the resolutions), written out here from the SPEC so that a change in the code that
/// the SPEC does not make fails.
@Suite("FindingKind: one contract per kind")
struct FindingKindContractTests {
    /// SPEC section 5's table, row by row.
    static let table: [FindingKind: (Severity, SuggestedAction)] = [
        .missedDelivery: (.high, .grant), .duplicateDelivery: (.medium, .revoke), .wrongAccount: (.high, .move),
        .productMismatch: (.medium, .investigate), .quantityMismatch: (.medium, .investigate),
        .refundedDelivery: (.medium, .revoke), .unverifiedDelivery: (.high, .investigate),
        .environmentMismatch: (.low, .investigate), .foreignBundle: (.medium, .investigate),
        .sharedReceipt: (.medium, .investigate),
    ]

    @Test(arguments: FindingKind.allCases)
    func theContractIsSPECsRow(kind: FindingKind) throws {
        let (severity, action) = try #require(Self.table[kind], "\(kind) is not in SPEC section 5's table")
        #expect(kind.severity == severity)
        #expect(kind.suggestedAction == action)
    }

    /// Dismissing is always possible, and the suggested action is one a decision may take.
    @Test(arguments: FindingKind.allCases)
    func theSuggestedActionIsAnAllowedResolution(kind: FindingKind) {
        #expect(kind.allowedResolutions.contains(.noAction))
        let resolutions: [SuggestedAction: Resolution] = [.grant: .granted, .revoke: .revoked, .move: .moved]
        if let suggested = resolutions[kind.suggestedAction] { #expect(kind.allowedResolutions.contains(suggested)) }
    }

    /// The issue that made decisions kind-aware: a grant where the customer already holds the
    /// goods (a duplicate) or Apple took the money back (a refund) is refused.
    @Test func grantingIsRefusedWhereGoodsAreHeld() {
        for kind in [FindingKind.duplicateDelivery, .refundedDelivery, .unverifiedDelivery, .environmentMismatch, .foreignBundle] {
            #expect(!kind.allowedResolutions.contains(.granted), "\(kind)")
        }
        #expect(FindingKind.foreignBundle.allowedResolutions == [.noAction])
    }

    /// The facts the SQL reads by kind name come from the contract.
    @Test func theKindListsTheSQLReadsComeFromTheContract() {
        #expect(FindingKind.uploadKinds == ["foreign_bundle"])
        #expect(FindingKind.unconfirmedKinds == ["unverified_delivery"])
        #expect(Set(FindingKind.disputedKinds) == ["wrong_account", "shared_receipt"])
        #expect(FindingKind.allCases.filter(\.accountIsTheBuyer) == [.missedDelivery, .wrongAccount])
        #expect(FindingKind.allCases.filter { !$0.applies(in: .sandbox) } == [.environmentMismatch])
    }
}
