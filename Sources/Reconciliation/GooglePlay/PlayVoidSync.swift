import Foundation
import GooglePlay

/// SKELETON, replaced by its implementation: the voided-purchases list (issue 38 item 3).
struct PlayVoidSync: Sendable {
    let api: PlayDeveloperAPIClient
    let services: PlayServices

    func sync(_ run: RunContext, _ summary: inout PlayRunSummary) async throws {}
}
