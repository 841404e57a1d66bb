import Foundation
import Mustache
import Reconciliation

/// The pages' mustache templates and stylesheet, from `Embedded/templates/*.mustache` and
/// `Embedded/assets/app.css`, compiled into the binary so `reconcile serve` needs no resource
/// folder. Data is only ever written with `{{ }}`, which HTML-escapes per Unicode scalar (HTMLEscaping.swift); `{{{ }}}` is never used.
/// Templates hold no words: labels come from the catalog as `{{t.<key>}}`, sentences with values
/// in them are filled in by the view models.
enum Templates {
    /// Every template, registered by file name (`queue.mustache` → `queue`). The one place the
    /// library is built, so a custom content type (escaping) is a one-line change here.
    static func library() throws -> MustacheLibrary {
        try MustacheLibrary.scalarEscaped(sources)
    }

    /// Template name → its text.
    static var sources: [(name: String, text: String)] {
        EmbeddedFiles.paths(under: "templates").filter { $0.hasSuffix(".mustache") }.compactMap { path in
            let name = String(path.dropFirst("templates/".count).dropLast(".mustache".count))
            return EmbeddedFiles.data(path).map { (name, String(decoding: $0, as: UTF8.self)) }
        }
    }

    /// The pages' stylesheet.
    static let css: String = EmbeddedFiles.data("assets/app.css").map { String(decoding: $0, as: UTF8.self) } ?? ""

    /// Every catalog key the templates use (`{{t.queue.heading}}`, `{{#t.x}}`…), for the catalog tests.
    static func catalogKeys() -> Set<String> {
        var keys: Set<String> = []
        let pattern = /\{\{[#^\/&]?\s*t\.([A-Za-z0-9_.\-]+)\s*\}\}/
        for (_, text) in sources {
            for match in text.matches(of: pattern) { keys.insert(String(match.output.1)) }
        }
        return keys
    }
}

/// The catalog as the templates see it: `{{t.queue.heading}}` walks it one dotted name at a time.
struct CatalogNode: MustacheParent {
    let catalog: Catalog
    let prefix: String

    init(_ catalog: Catalog, prefix: String = "") {
        self.catalog = catalog
        self.prefix = prefix
    }

    func child(named name: String) -> Any? {
        let key = prefix.isEmpty ? name : prefix + "." + name
        if let text = catalog.strings[key] { return text }
        if catalog.groups.contains(key) { return CatalogNode(catalog, prefix: key) }
        return nil
    }
}
