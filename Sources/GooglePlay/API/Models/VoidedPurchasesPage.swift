/// One page of `purchases.voidedpurchases.list`: `{"voidedPurchases": […], "tokenPagination": {"nextPageToken"}}`.
public struct VoidedPurchasesPage: Decodable, Hashable, Sendable {
    public var voidedPurchases: [VoidedPurchase]
    /// The `token` of the next page; nil on the last.
    public var nextPageToken: String?

    private enum CodingKeys: String, CodingKey {
        case voidedPurchases, tokenPagination
    }

    private struct TokenPagination: Decodable {
        var nextPageToken: String?
    }

    public init(voidedPurchases: [VoidedPurchase], nextPageToken: String?) {
        self.voidedPurchases = voidedPurchases
        self.nextPageToken = nextPageToken
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // An empty list is answered `{}`.
        voidedPurchases = try container.decodeIfPresent([VoidedPurchase].self, forKey: .voidedPurchases) ?? []
        let next = container.lenient(TokenPagination.self, .tokenPagination)?.nextPageToken
        nextPageToken = next?.isEmpty == false ? next : nil
    }
}
