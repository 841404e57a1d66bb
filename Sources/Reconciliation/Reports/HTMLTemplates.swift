import Mustache

/// The mustache content type of every HTML template, the pages' and `report.html`'s.
/// swift-mustache's own HTML type escapes per `Character`, so a `<` or `"` that shares a grapheme
/// cluster with a combining mark or a prefix character (U+0600) passes through it unescaped; this
/// one escapes per Unicode scalar (`HTMLText`) and shows bidirectional controls as visible marks.
public struct ScalarHTMLContentType: MustacheContentType {
    /// The name templates select it by, in the pragma every template starts with.
    public static let name = "HTML_SCALAR"

    public init() {}

    public func escapeText(_ text: String) -> String {
        HTMLText.display(text)
    }
}

extension MustacheLibrary {
    /// A library of HTML templates, each escaping with ``ScalarHTMLContentType``.
    ///
    /// swift-mustache resets the content type to its own HTML type in every partial and parent
    /// template (`{{>…}}`, `{{<…}}`), so the pragma is put at the top of each template here, in
    /// the one place templates are registered, rather than trusted to every template file.
    public static func scalarEscaped(_ templates: [(name: String, text: String)]) throws -> MustacheLibrary {
        MustacheContentTypes.register(ScalarHTMLContentType(), named: ScalarHTMLContentType.name)
        var library = MustacheLibrary()
        for (name, text) in templates {
            try library.register("{{% CONTENT_TYPE: \(ScalarHTMLContentType.name) }}\n" + text, named: name)
        }
        return library
    }
}

/// A view model a template reads by name, from a table of its properties, rather than through
/// `Mirror`, swift-mustache's default, which reflects the whole value at every lookup (most of a
/// large page's time, and of a quiet night's report head). A name the table does not have is nil,
/// and the template looks further up, as with `Mirror`; a nil optional is nil too. The tests that
/// walk every part of a page and of the report head catch a property left out of a table.
public protocol TemplateValues: MustacheParent {
    /// Every stored property, under its own name.
    static var byName: TemplateNames<Self> { get }
}

/// A view model's properties by the names its template uses.
public typealias TemplateNames<Root> = [String: PartialKeyPath<Root> & Sendable]

extension TemplateValues {
    public func child(named name: String) -> Any? {
        guard let keyPath = Self.byName[name] else { return nil }
        let value = self[keyPath: keyPath]
        if let optional = value as? any OptionalTemplateValue { return optional.wrapped }
        return value
    }
}

/// An optional read through a key path: its value, or nil (not an `Any` holding `nil`).
protocol OptionalTemplateValue {
    var wrapped: Any? { get }
}

extension Optional: OptionalTemplateValue {
    var wrapped: Any? { self }
}

/// The catalog as a template sees it: `{{t.queue.heading}}` walks it one dotted name at a time.
public struct CatalogNode: MustacheParent, Sendable {
    let catalog: Catalog
    let prefix: String

    public init(_ catalog: Catalog, prefix: String = "") {
        self.catalog = catalog
        self.prefix = prefix
    }

    public func child(named name: String) -> Any? {
        let key = prefix.isEmpty ? name : prefix + "." + name
        if let text = catalog.strings[key] { return text }
        if catalog.groups.contains(key) { return CatalogNode(catalog, prefix: key) }
        return nil
    }

    /// Every catalog key a template's text uses (`{{t.queue.heading}}`, `{{#t.x}}`…), for the catalog tests.
    public static func keys(in template: String) -> Set<String> {
        let pattern = /\{\{[#^\/&]?\s*t\.([A-Za-z0-9_.\-]+)\s*\}\}/
        return Set(template.matches(of: pattern).map { String($0.output.1) })
    }
}

/// The one stylesheet (`Embedded/assets/app.css`): served to the pages as `/assets/app.css`, and
/// written inline into `report.html`, which is opened from disk and loads nothing. Severity
/// colours are defined in it once, as custom properties of `.sev-<severity>`.
public enum Stylesheet {
    public static let css: String = {
        guard let data = EmbeddedFiles.data("assets/app.css") else {
            preconditionFailure("the embedded stylesheet assets/app.css is missing")
        }
        return String(decoding: data, as: UTF8.self)
    }()
}
