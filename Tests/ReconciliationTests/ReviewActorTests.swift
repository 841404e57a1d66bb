@testable import Reconciliation
import Testing

/// Who acted on an item, typed: the product's own actors round-trip through the names they
/// record, and no person can be given one of them.
@Suite("Review actors")
struct ReviewActorTests {
    @Test(arguments: [ReviewActor.job, .receiver, .policy(rule: "small-pack"), .person("alice")])
    func aRecordedNameStandsForItsActor(actor: ReviewActor) {
        #expect(ReviewActor(recorded: actor.name) == actor)
    }

    @Test func theProductsNamesAreReservedAgainstPeople() throws {
        for name in ["reconcile", "receiver", "Receiver", "ＲＥＣＯＮＣＩＬＥ", "policy:x", " Policy:small-pack "] {
            #expect(throws: ReviewError.self, "\(name)") { try ReviewActor.person(validating: name) }
        }
        #expect(try ReviewActor.person(validating: " alice ") == .person("alice"))
        #expect(ReviewActor.reservedNames == [ReviewActor.job.name, ReviewActor.receiver.name])
        #expect(PolicyRule.actorPrefix == ReviewActor.policyPrefix)
    }

    @Test func onlyPeopleArePeople() {
        #expect(ReviewActor.person("bob").isPerson)
        let product: [ReviewActor] = [.job, .receiver, .policy(rule: "r")]
        let people = product.filter { $0.isPerson }
        #expect(people.isEmpty)
    }
}

/// One note rule for the service and the pages: counted in Unicode scalars, so a note of 1,500
/// characters each with a combining mark (3,000 scalars) is too long for both, not accepted by the
/// page and refused by the service.
@Suite("Review notes")
struct ReviewNoteRuleTests {
    @Test func theRuleCountsScalarsWhereverItIsAsked() throws {
        let combined = String(repeating: "e\u{301}", count: 1500)
        #expect(combined.count == 1500)
        #expect(ReviewNote.problem(combined, required: false) == .tooLong)
        #expect(throws: ReviewError.self) { try ReviewNote.validated(combined, required: false) }
        #expect(ReviewNote.problem("  ", required: true) == .required)
        #expect(ReviewNote.problem(nil, required: false) == nil)
        #expect(try ReviewNote.validated("  fine  ", required: true) == "fine")
    }
}
