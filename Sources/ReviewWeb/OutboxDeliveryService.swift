import Reconciliation
import ServiceLifecycle

/// Delivers the outbox to the app's webhook after a decision made in the browser, as `review
/// resolve` does after one made at the terminal (SPEC section 13), without holding up the page:
/// the decision only wakes ``OutboxDelivery``, which runs as one of the application's services
/// (one pass at a time, on a connection of its own, not one of the pages'), retries what stays
/// undelivered with a capped backoff, and stops when the server shuts down.
struct OutboxDeliveryService: Service {
    let delivery: OutboxDelivery

    func run() async {
        // The server's graceful shutdown ends it at once: a pass in flight is not waited for (the
        // row it was sending is sent again once its lease runs out, by this process or the next).
        await cancelWhenGracefulShutdown { await delivery.run() }
    }
}
