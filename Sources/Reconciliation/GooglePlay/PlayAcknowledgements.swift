import Foundation
import GooglePlay

/// SKELETON, replaced by its implementation: the acknowledgement rescue (issue 38 item 5).
struct PlayAcknowledgements: Sendable {
    let api: PlayDeveloperAPIClient
    let services: PlayServices

    func run(_ run: RunContext, _ summary: inout PlayRunSummary) async throws {}
}
