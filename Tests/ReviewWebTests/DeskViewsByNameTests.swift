import Foundation
import Mustache
import Reconciliation
@testable import ReviewWeb
import Testing

/// The desk page's view models give their values by name (`MustacheParent`) rather than through
/// `Mirror`, which was most of the server's time on a customer with many transactions. A property
/// left out of a `child(named:)` would render as nothing, or as a value of the same name further
/// up the context stack, so every part of a page with every optional filled in is checked here.
@Suite("The desk page's view models by name")
struct DeskViewsByNameTests {
    static let reader = Reader.standard

    /// A customer page with every part present and every optional non-nil; the values are all
    /// different, so a name giving another property's value shows.
    static func frame() -> PageFrame {
        let transaction = { (id: String) in
            DeskPage.Transaction(
                id: id, verdict: "finding", verdictLabel: "Missed delivery", isFinding: true,
                explanation: "Apple says it was bought; nothing was delivered.",
                facts: [.init(key: "Product", value: "gems_100"), .init(key: "Price", value: "¥6.00")],
                sources: "App Store Server API", buyer: "desk-u1 (app account token)",
                deliveries: [.init(
                    id: "71", transaction: id, user: "desk-u1", product: "gems_100", quantity: "2",
                    delivered: "21 Nov 10:02", revokedAt: "22 Nov 09:00", revoked: true)],
                hasDeliveries: true,
                uploads: [.init(
                    id: "33", user: "desk-u2", kind: "Receipt", uploaded: "21 Nov 10:01", device: "iPhone14,5 · iOS 17.2",
                    verification: "Verified (Apple status 0)")],
                hasUploads: true,
                items: [.init(
                    id: 12, href: "/items/12", kindLabel: "Unverified delivery", statusLabel: "Open", severity: "high",
                    severityLabel: "High")],
                hasItems: true,
                refundRequests: [RefundRequestRow(
                    requested: "20 Nov 08:15", answered: "20 Nov 08:16", status: "answered", statusLabel: "Sent",
                    delivery: "Delivered", consumed: "50%", preference: "Decline", outcome: "Refunded 21 Nov 10:02",
                    outcomeClass: "refunded")],
                hasRefundRequests: true)
        }
        let page = DeskPage(
            query: "desk-u1", notice: "Showing the first 50.", csrf: "page-csrf", summary: "2 purchases, 1 finding",
            value: "desk-u1-value", kind: "user", canEnqueue: true,
            transactions: [transaction("9100000001"), transaction("9100000002")], pageText: "Page 2 of 3",
            prevHref: "/desk?q=desk-u1&page=1", nextHref: "/desk?q=desk-u1&page=3",
            asked: "Asked: the job's records.", playNoHistory: "Google Play keeps no purchase history by account.")
        let session = SessionStore.Session(
            id: "session-id", name: "mei", csrfToken: "session-csrf", expires: .distantFuture, ends: .distantFuture,
            flash: nil, language: nil, timeZone: nil)
        return PageFrame(
            page: page, title: "Customer desk-u1", reader: reader, path: "/desk", query: "q=desk-u1&tz=UTC&page=2",
            signedIn: session, flash: FlashView(text: "Review items opened.", isError: true), tab: .queue)
    }

    /// The optional's value, or nil for an empty one (what `Mirror` and `child(named:)` give).
    static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.map { unwrapped($0.value) } ?? nil
    }

    @Test func everyPartOfTheDeskPageGivesEachOfItsValuesByName() {
        var checked = 0
        var parts: Set<String> = []
        func walk(_ part: Any, _ path: String) {
            let mirror = Mirror(reflecting: part)
            if [.collection, .optional].contains(mirror.displayStyle) {
                for child in mirror.children { walk(child.value, path) }
                return
            }
            // The catalog is walked by dotted key, not by its properties.
            if part is CatalogNode || part is String || part is Bool || part is Int || part is Int64 { return }
            guard let parent = part as? MustacheParent else {
                Issue.record("\(path) (\(type(of: part))) does not give its values by name")
                return
            }
            parts.insert(String(describing: type(of: part)))
            for child in mirror.children {
                guard let label = child.label else { continue }
                checked += 1
                let value = Self.unwrapped(child.value)
                #expect(value != nil, "\(path).\(label) is nil: the page is to have every optional filled in")
                let given = parent.child(named: label).flatMap { Self.unwrapped($0) }
                #expect(given != nil, "\(path).\(label) is not given by name")
                if let value, let given {
                    #expect(String(describing: given) == String(describing: value), "\(path).\(label) gives another value")
                }
                if let value { walk(value, path + "." + label) }
            }
        }
        walk(Self.frame(), "frame")
        #expect(parts == [
            "PageFrame", "LanguageLink", "Field", "SessionView", "FlashView", "OptionView", "DeskPage", "Transaction",
            "KeyValue", "Delivery", "Upload", "Item", "RefundRequestRow",
        ])
        #expect(checked > 150)
    }

    /// The page renders from the names: the page's values, the frame's, and the catalog's from
    /// inside a transaction card (`{{t.…}}` looked up past Transaction and DeskPage).
    @Test func theDeskPageRendersFromTheNames() throws {
        let html = try #require(try Templates.library().render(Self.frame(), withTemplate: "desk"))
        let t = Self.reader.catalog
        for text in [
            "<html lang=\"en\">", "<title>Customer desk-u1 · ", "id=\"tx-9100000001\"", "id=\"tx-9100000002\"",
            "verdict-finding verdict-finding", "<dt>Price</dt><dd>¥6.00</dd>", "<tr class=\"revoked\"><td>71</td>",
            "Verified (Apple status 0)", "<tr class=\"answer-answered\">", "class=\"outcome-refunded\">Refunded 21 Nov 10:02",
            "<a href=\"/items/12\">#12 · Unverified delivery</a>", "value=\"desk-u1-value\"", "value=\"page-csrf\"",
            "value=\"session-csrf\"", "<span>mei</span>", "class=\"flash error\"", "Review items opened.", "Page 2 of 3",
            "<input type=\"hidden\" name=\"page\" value=\"2\">", "<h3>\(t["deliveries.heading"])</h3>",
            "<h3>\(t["refund_request.heading"])</h3>", "<h3>\(t["desk.review_items"])</h3>",
        ] {
            #expect(html.contains(text), "\(text) is not on the page")
        }
        #expect(html.components(separatedBy: "<h3>\(t["uploads.heading"])</h3>").count == 3)
    }
}
