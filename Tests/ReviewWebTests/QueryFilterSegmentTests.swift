import Reconciliation
@testable import ReviewWeb
import Testing

/// The queue's segment filter (the Insights page's links, SPEC section 19): until resolved to the
/// segment's items it matches nothing, so that no path that forgets it takes more than the segment.
@Suite struct QueryFilterSegmentTests {
    @Test func aSegmentMatchesNothingUntilResolved() {
        let query = QueryFilter(query: "status=active&segment=app_version:4.3.0&product=coin42")
        #expect(query.segment?.dimension == .appVersion && query.segment?.value == "4.3.0")
        #expect(query.filter.ids == [0])
        #expect(query.filter.productID == "coin42")
        #expect(query.filter(segmentItems: [7, 9]).ids == [7, 9])
        #expect(query.filter(segmentItems: []).ids == [0])
        // A value may hold colons; an unknown dimension is no segment, yet still matches nothing.
        #expect(QueryFilter(query: "segment=device_model:a:b").segment?.value == "a:b")
        let unknown = QueryFilter(query: "segment=colour:red")
        #expect(unknown.segment == nil && unknown.filter.ids == [0])
        #expect(QueryFilter(query: "status=active").filter.ids.isEmpty)
        // The bulk selection's "everything this filter matches" inherits the same guard.
        #expect(BulkSelection(query: "all=1&segment=store:google_play").filter?.ids == [0])
        #expect(query.encoded(replacing: ["segment": nil]).contains("segment") == false)
    }
}
