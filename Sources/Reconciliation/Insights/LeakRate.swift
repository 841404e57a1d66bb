import Foundation

/// A segment's leak rate and what makes it worth reading first (SPEC section 19).
public struct LeakRate: Sendable, Equatable {
    /// The normal quantile of a two-sided 95 % interval.
    public static let z = 1.959964

    /// Purchases judged.
    public var purchases: Int
    /// Purchases with a `missed_delivery` or `wrong_account` finding.
    public var leaks: Int

    public init(purchases: Int, leaks: Int) {
        self.purchases = purchases
        self.leaks = leaks
    }

    /// Leaks per purchase; 0 without purchases.
    public var rate: Double { purchases == 0 ? 0 : Double(leaks) / Double(purchases) }

    /// The lower bound of the rate's 95 % Wilson score interval: a small segment with a few leaks
    /// gets a low bound, so that chance alone does not flag it. 0 without purchases.
    public var lowerBound: Double { Self.wilsonLowerBound(successes: leaks, trials: purchases) }

    /// (p + z²/2n − z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n), p = successes / n.
    public static func wilsonLowerBound(successes: Int, trials: Int, z: Double = z) -> Double {
        guard trials > 0 else { return 0 }
        let n = Double(trials)
        let p = Double(successes) / n
        let z2 = z * z
        let centre = p + z2 / (2 * n)
        let spread = z * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        return max(0, (centre - spread) / (1 + z2 / n))
    }

    /// The fewest leaks a flagged segment has.
    public static let flagMinimumLeaks = 5

    /// Flagged: the rate's Wilson lower bound is above three times the span's overall rate, with at
    /// least 5 leaks.
    public func isFlagged(overall: LeakRate) -> Bool {
        leaks >= Self.flagMinimumLeaks && lowerBound > 3 * overall.rate
    }
}
