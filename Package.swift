// swift-tools-version: 6.2
import PackageDescription

// Every target builds in Swift 6 language mode with warnings as errors.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .unsafeFlags(["-warnings-as-errors"]),
]

let package = Package(
    name: "iap-reconcile",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "reconcile", targets: ["reconcile"]),
        .executable(name: "appstore-sim", targets: ["appstore-sim"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.25.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.10.0"),
        // Signals (SIGTERM, SIGINT) for `reconcile run`, `reconcile serve` and the simulator.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.0.0", traits: [.defaults, "YAML"]),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // The policy file (RECONCILE_POLICY_FILE, YAML or JSON), read as nodes that know their line.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // Tests only: property-based tests of the receipt parser and the JWS verifier.
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // libpq, through Debian's libpq-dev. Only the Postgres module imports it.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // Dates to days and back, for the receipt parser and PostgreSQL's timestamps.
        .target(name: "CivilCalendar"),
        .target(
            name: "Postgres",
            dependencies: ["CLibPQ", "CivilCalendar"]
        ),
        .target(
            name: "AppStore",
            dependencies: [
                "CivilCalendar",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Embedded"],
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "AppStoreSimulator",
            dependencies: [
                "AppStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                // Posts the notifications it makes to the app's URL (`--notification-url`).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Reconciliation",
            dependencies: [
                "Postgres",
                "AppStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // report.html is a template (Embedded/templates/report.mustache) styled by the pages'
                // stylesheet (Embedded/assets/app.css); the pages render theirs with the same escaping.
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Yams", package: "Yams"),
            ],
            exclude: ["Embedded"],
            plugins: ["EmbedFiles"]
        ),
        // The support-staff pages (SPEC section 8), on the same service layer as `reconcile review`.
        .target(
            name: "ReviewWeb",
            dependencies: [
                "Reconciliation",
                "Postgres",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            // Templates: Embedded/templates/*.mustache; their stylesheet is Reconciliation's (shared with report.html).
            exclude: ["Embedded"],
            plugins: ["EmbedFiles"]
        ),
        .executableTarget(
            name: "reconcile",
            dependencies: [
                "Reconciliation",
                "ReviewWeb",
                "Postgres",
                "AppStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "appstore-sim",
            dependencies: [
                "AppStoreSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // Seeds the demo's database with uploads signed by the simulator's CA (scripts/demo only).
        .executableTarget(
            name: "demo-seed",
            dependencies: [
                "Postgres",
                // For the SQL files (sql/demo/), embedded in it with the rest of sql/.
                "Reconciliation",
                "AppStore",
                "AppStoreSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // The measuring half of scripts/bench (SPEC section 12); not a product.
        .executableTarget(
            name: "reconcile-bench",
            dependencies: [
                "Postgres",
                "Reconciliation",
                "AppStore",
                "AppStoreSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),

        // Build tooling: embeds SQL migrations and certificates into the binaries, so that
        // `reconcile` is one self-contained file that cron can run from anywhere.
        .executableTarget(name: "embed-files"),
        .plugin(
            name: "EmbedFiles",
            capability: .buildTool(),
            dependencies: ["embed-files"]
        ),

        // Shared by the test targets: a fresh database per suite on the throwaway cluster.
        .target(name: "TestSupport", dependencies: ["Postgres"], path: "Tests/TestSupport"),
        // Shared by the AppStore and Reconciliation tests: a forger's certificate authority.
        .target(
            name: "AppStoreTestSupport",
            dependencies: [
                "AppStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Tests/AppStoreTestSupport"
        ),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"]),
        .testTarget(
            name: "AppStoreTests",
            dependencies: [
                "AppStore", "AppStoreSimulator", "AppStoreTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "ReconciliationTests",
            dependencies: [
                "Reconciliation", "Postgres", "AppStore", "AppStoreSimulator", "TestSupport", "AppStoreTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                // A real HTTP server for the outbox webhook's tests.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .testTarget(
            name: "ReviewWebTests",
            dependencies: [
                "ReviewWeb",
                "Reconciliation",
                "Postgres",
                "TestSupport",
                // Refund requests answered against the simulator, for the pages that show them.
                "AppStore",
                "AppStoreSimulator",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)

for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}
