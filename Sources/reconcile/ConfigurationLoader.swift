import Configuration
import Foundation
import Reconciliation

/// Reads the settings through swift-configuration: environment variables first, then the
/// `--config` file (JSON, or YAML for `.yaml`/`.yml`) with the same keys.
enum ConfigurationLoader {
    static func settings(configFile: String?, requireBundleIDs: Bool = true) async throws -> Settings {
        var providers: [any ConfigProvider] = [
            EnvironmentVariablesProvider(secretsSpecifier: .specific(Settings.secretKeys))
        ]
        if let configFile {
            guard FileManager.default.isReadableFile(atPath: configFile) else {
                throw ConfigurationError("--config \(configFile): no such readable file")
            }
            let path = ConfigReader(
                provider: InMemoryProvider(values: ["filePath": ConfigValue(.string(configFile), isSecret: false)]))
            do {
                if configFile.hasSuffix(".yaml") || configFile.hasSuffix(".yml") {
                    providers.append(try await FileProvider<YAMLSnapshot>(config: path))
                } else {
                    providers.append(try await FileProvider<JSONSnapshot>(config: path))
                }
            } catch {
                throw ConfigurationError("--config \(configFile) is not valid JSON or YAML: \(error)")
            }
        }
        let reader = ConfigReader(providers: providers)
        do {
            return try Settings(lookup: { name in
                let key = ConfigKey([name])
                let secret = Settings.secretKeys.contains(name)
                // Files may hold numbers, booleans or lists where the environment holds text.
                return reader.string(forKey: key, isSecret: secret)
                    ?? reader.int(forKey: key).map(String.init)
                    ?? reader.double(forKey: key).map { String($0) }
                    ?? reader.bool(forKey: key).map { String($0) }
                    ?? reader.stringArray(forKey: key)?.joined(separator: ",")
            }, requireBundleIDs: requireBundleIDs)
        } catch {
            throw ConfigurationError(error.description)
        }
    }
}
