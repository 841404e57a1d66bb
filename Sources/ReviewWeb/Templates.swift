import Foundation
import Mustache
import Reconciliation

/// The pages' mustache templates, from `Embedded/templates/*.mustache`, compiled into the binary so
/// `reconcile serve` needs no resource folder; their stylesheet is Reconciliation's `Stylesheet`, which
/// `report.html` embeds too. Data is only ever written with `{{ }}`, which HTML-escapes per Unicode
/// scalar (`ScalarHTMLContentType`, Reconciliation's HTMLTemplates.swift); `{{{ }}}` is never used.
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

    /// The pages' stylesheet, the one `report.html` embeds.
    static var css: String { Stylesheet.css }

    /// Every catalog key the templates use (`{{t.queue.heading}}`, `{{#t.x}}`…), for the catalog tests.
    static func catalogKeys() -> Set<String> {
        sources.reduce(into: []) { $0.formUnion(CatalogNode.keys(in: $1.text)) }
    }
}
