import Foundation
import PackagePlugin

/// Embeds every file under a target's `Embedded/` folder (symlinks followed) into generated
/// Swift source, so that `reconcile` carries its migrations and root certificates inside itself.
@main
struct EmbedFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let folder = target.directoryURL.appending(path: "Embedded").resolvingSymlinksInPath()
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding files of \(target.name)",
                executable: try context.tool(named: "embed-files").url,
                arguments: [output.path, folder.path],
                inputFiles: inputs(under: folder),
                outputFiles: [output]
            )
        ]
    }

    private func inputs(under folder: URL) -> [URL] {
        guard let enumerator = FileManager.default.enumerator(
            at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        else { return [] }
        var urls: [URL] = []
        for case let url as URL in enumerator {
            let resolved = url.resolvingSymlinksInPath()
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: resolved.path, isDirectory: &isDirectory) {
                if isDirectory.boolValue, resolved != url {
                    urls += inputs(under: resolved)
                } else if !isDirectory.boolValue {
                    urls.append(resolved)
                }
            }
        }
        return urls
    }
}
