/// What acknowledging a purchase came to (`purchases.products.acknowledge`,
/// `purchases.subscriptions.acknowledge`).
public enum PlayAcknowledgeOutcome: Hashable, Sendable {
    /// Google took the acknowledgement (HTTP 204 or 200).
    case acknowledged
    /// HTTP 400 `invalidPurchaseState`: it was acknowledged already.
    case alreadyAcknowledged
    /// HTTP 400 `productNotOwnedByUser`: refunded or voided, nothing to keep.
    case notOwned
    /// HTTP 404: Google does not know the token.
    case notFound
    /// HTTP 410: Google no longer keeps the purchase.
    case gone
    /// Another refusal, with Google's reason.
    case rejected(httpStatus: Int, reason: String)
    /// Google could not answer now; try again in a later run.
    case retryLater(reason: String, httpStatus: Int?)
}
