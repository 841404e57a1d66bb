import Foundation
import GooglePlay
import Logging

/// What Google Play's stages of a run did (SPEC section 18), for report.json's `"play"` object and
/// the report's summary. Nil on a run with Play off.
public struct PlayRunSummary: Sendable, Equatable {
    /// No service account: refunds cannot reach the job (the voided list and the API need one), and
    /// the report says Play refunds are unchecked.
    public var refundsUnchecked = false
    /// A package's voided-purchases list was last read more than the 30 days Google keeps ago: the
    /// voids in between may be lost, and the purchases bought then were asked of the API again.
    public var voidedGap = false
    /// Voids the voided-purchases list brought that no earlier read had.
    public var voidsRecorded = 0
    /// Purchases bought in a voided-list gap asked of the API again.
    public var gapPurchasesAsked = 0
    /// Ledger order ids no upload holds asked of the Orders API, and of those Google did not answer.
    public var ordersAsked = 0
    public var ordersUnanswered = 0
    /// Real-time notifications the receiver stored that this run asked Google about (the
    /// receiver's worker had not: it was down, or Google could not answer it then).
    public var notificationsAsked = 0
    /// Subscriptions asked of subscriptionsv2 again because their period had ended (`PlayRenewals`),
    /// and the orders (renewals nobody uploaded, first orders) stored from the answers.
    public var subscriptionsAsked = 0
    public var renewalOrdersStored = 0
    /// Delivered purchases the job acknowledged (`RECONCILE_PLAY_ACKNOWLEDGE=on`).
    public var acknowledged = 0
    /// Purchases Google voided for want of an acknowledgement (`voidedReason` 8) the job learnt of
    /// since the last finished run (this run's read, or a `notifications sync` in between).
    public var voidedUnacknowledged = 0

    public init() {}
}

/// Google Play's stages of a run: the voided-purchases list before verification (`play_voids`);
/// after it, the Orders API for ledger order ids no upload holds, the renewals of subscriptions whose
/// period has ended and the acknowledgement rescue
/// (`play_api`). Each needs the Developer API; without it the stages only say refunds are unchecked.
struct PlayRunStage: Sendable {
    let services: PlayServices
    let settings: Settings

    /// Before verification: the voided-purchases list since the last read (`PlayVoidSync`).
    func beforeVerify(_ run: RunContext, _ summary: inout PlayRunSummary) async throws {
        guard let api = services.api else {
            summary.refundsUnchecked = true
            return
        }
        try await PlayVoidSync(api: api, services: services).sync(run, &summary)
        // Counted since the last finished run, not by this run's read alone: the hourly
        // `notifications sync` reads the same list, and the nightly report must still say so.
        summary.voidedUnacknowledged = try PlayVoids.unacknowledgedSince(run.resumesAfter, on: run.connection)
    }

    /// After verification: the real-time notifications the receiver stored and nobody asked
    /// Google about yet (``PlayNotificationWorker/drain(runID:on:)``), the Orders API for ledger
    /// order ids no upload holds (`PlayOrderLookups`), the subscriptions whose period has ended
    /// (`PlayRenewals`: the renewals nobody uploaded), then the acknowledgement rescue
    /// (`PlayAcknowledgements`).
    func afterVerify(_ run: RunContext, _ summary: inout PlayRunSummary) async throws {
        guard let api = services.api else { return }
        var timing = PlayNotificationWorker.Timing()
        timing.perPass = 200
        timing.budget = .seconds(60)
        let notifications = try await PlayNotificationWorker(
            api: api, packageNames: services.settings.packageNames, grace: settings.grace, timing: timing,
            logger: run.logger
        ).drain(runID: run.id, on: run.connection)
        summary.notificationsAsked = notifications.applied + notifications.unknown
        try await PlayOrderLookups(api: api, services: services, relations: settings.relations).run(run, &summary)
        // After every source of white rows: a subscription the Orders API brought tonight is asked
        // about tonight, as one run over the whole history asks about it.
        try await PlayRenewals(api: api, services: services).run(run, &summary)
        if services.settings.acknowledge, !run.dryRun {
            try await PlayAcknowledgements(api: api, services: services, relations: settings.relations).run(run, &summary)
        }
    }
}
