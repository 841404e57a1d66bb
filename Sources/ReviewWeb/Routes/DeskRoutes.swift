import Hummingbird

/// The support desk's pages (issue 15: a customer page, found by order id from the search form
/// every page's header keeps a `{{$search}}` slot for). None yet.
extension ReviewSite {
    func deskRoutes() -> RouteCollection<ReviewRequestContext> {
        RouteCollection(context: ReviewRequestContext.self)
    }
}
