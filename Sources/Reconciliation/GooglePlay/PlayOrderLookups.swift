import Foundation
import GooglePlay

/// SKELETON, replaced by its implementation: the Orders API lookups (issue 38 item 3).
struct PlayOrderLookups: Sendable {
    let api: PlayDeveloperAPIClient
    let services: PlayServices

    func run(_ run: RunContext, _ summary: inout PlayRunSummary) async throws {}
}
