extension FindingKind {
    /// Whether the finding is an order that leaked (SPEC section 19: the leak rate counts
    /// `missed_delivery` and `wrong_account`): goods paid for that the buyer's account did not get.
    public var isLeak: Bool {
        switch self {
        case .missedDelivery, .wrongAccount: true
        case .duplicateDelivery, .productMismatch, .quantityMismatch, .refundedDelivery, .unverifiedDelivery,
            .environmentMismatch, .foreignBundle, .sharedReceipt:
            false
        }
    }
}
