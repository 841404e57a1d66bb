import Mustache
import Reconciliation

/// The pages' mustache content type. swift-mustache's own HTML type escapes per `Character`, so
/// a `<` or `"` that shares a grapheme cluster with a combining mark or a prefix character
/// (U+0600) passes through it unescaped; this one escapes per Unicode scalar (`HTMLText`) and
/// shows bidirectional controls as visible marks.
struct ScalarHTMLContentType: MustacheContentType {
    /// The name templates select it by, in the pragma every template starts with.
    static let name = "HTML_SCALAR"

    func escapeText(_ text: String) -> String {
        HTMLText.display(text)
    }
}

extension MustacheLibrary {
    /// A library of page templates, each escaping with ``ScalarHTMLContentType``.
    ///
    /// swift-mustache resets the content type to its own HTML type in every partial and parent
    /// template (`{{>…}}`, `{{<…}}`), so the pragma is put at the top of each template here, in
    /// the one place templates are registered, rather than trusted to every template file.
    static func scalarEscaped(_ templates: [(name: String, text: String)]) throws -> MustacheLibrary {
        MustacheContentTypes.register(ScalarHTMLContentType(), named: ScalarHTMLContentType.name)
        var library = MustacheLibrary()
        for (name, text) in templates {
            try library.register("{{% CONTENT_TYPE: \(ScalarHTMLContentType.name) }}\n" + text, named: name)
        }
        return library
    }
}
