// swift-tools-version: 6.2
import PackageDescription

// Every target builds in Swift 6 language mode with warnings as errors.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .unsafeFlags(["-warnings-as-errors"]),
]

// The products of the dependencies below, by the names the targets use.
extension Target.Dependency {
    static var argumentParser: Self { .product(name: "ArgumentParser", package: "swift-argument-parser") }
    static var logging: Self { .product(name: "Logging", package: "swift-log") }
    static var crypto: Self { .product(name: "Crypto", package: "swift-crypto") }
    static var cryptoExtras: Self { .product(name: "_CryptoExtras", package: "swift-crypto") }
    static var swiftASN1: Self { .product(name: "SwiftASN1", package: "swift-asn1") }
    static var x509: Self { .product(name: "X509", package: "swift-certificates") }
    static var nioCore: Self { .product(name: "NIOCore", package: "swift-nio") }
    static var nioHTTP1: Self { .product(name: "NIOHTTP1", package: "swift-nio") }
    static var nioHTTPTypes: Self { .product(name: "NIOHTTPTypes", package: "swift-nio-extras") }
    static var asyncHTTPClient: Self { .product(name: "AsyncHTTPClient", package: "async-http-client") }
    static var hummingbird: Self { .product(name: "Hummingbird", package: "hummingbird") }
    static var hummingbirdTesting: Self { .product(name: "HummingbirdTesting", package: "hummingbird") }
    static var serviceLifecycle: Self { .product(name: "ServiceLifecycle", package: "swift-service-lifecycle") }
    static var configuration: Self { .product(name: "Configuration", package: "swift-configuration") }
    static var mustache: Self { .product(name: "Mustache", package: "swift-mustache") }
    static var yams: Self { .product(name: "Yams", package: "Yams") }
    static var propertyBased: Self { .product(name: "PropertyBased", package: "swift-property-based") }
}

/// A library target whose `Embedded/` folder (SQL, certificates, templates) the EmbedFiles plugin
/// compiles into it.
func embeddingTarget(name: String, dependencies: [Target.Dependency]) -> Target {
    .target(name: name, dependencies: dependencies, exclude: ["Embedded"], plugins: ["EmbedFiles"])
}

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
        // The HTTP parts a server connection's pipeline carries (the pages' and the receiver's
        // connection cap); hummingbird's own dependency.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.24.0"),
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
        .target(name: "Postgres", dependencies: ["CLibPQ", "CivilCalendar"]),
        embeddingTarget(
            name: "AppStore",
            dependencies: [
                "CivilCalendar", .crypto, .cryptoExtras, .swiftASN1, .x509, .asyncHTTPClient, .nioCore, .logging,
                // HTTPExchange's answers carry AsyncHTTPClient's headers.
                .nioHTTP1,
            ]
        ),
        // Google's side (SPEC section 18): Play purchases and their signatures, the Play Developer
        // API (OAuth 2.0 service account, productsv2, subscriptionsv2, voided purchases, orders,
        // acknowledgements) and real-time developer notifications. Knows nothing of the database;
        // shares the App Store module's HTTP plumbing (HTTPExchange, RetryPolicy, RequestPacer).
        .target(
            name: "GooglePlay",
            dependencies: [
                "AppStore", .crypto, .cryptoExtras, .swiftASN1, .asyncHTTPClient, .nioCore, .nioHTTP1, .logging,
            ]
        ),
        .target(
            name: "AppStoreSimulator",
            dependencies: [
                "AppStore", "GooglePlay", .hummingbird, .crypto, .cryptoExtras, .swiftASN1, .x509, .logging,
                // Posts the notifications it makes to the app's URL (`--notification-url`).
                .asyncHTTPClient,
                // A graceful stop of the in-process simulator (`withRunning`).
                .serviceLifecycle,
            ]
        ),
        embeddingTarget(
            name: "Reconciliation",
            dependencies: [
                "Postgres", "AppStore", "GooglePlay", .logging, .crypto, .asyncHTTPClient, .yams,
                // report.html is a template (Embedded/templates/report.mustache) styled by the pages'
                // stylesheet (Embedded/assets/app.css); the pages render theirs with the same escaping.
                .mustache,
            ]
        ),
        // The support-staff pages (SPEC section 8), on the same service layer as `reconcile review`.
        // Templates: Embedded/templates/*.mustache; their stylesheet is Reconciliation's (shared with report.html).
        embeddingTarget(
            name: "ReviewWeb",
            dependencies: [
                "Reconciliation", "Postgres", .hummingbird, .mustache, .logging, .nioCore,
                // Where requests begin and answers end, for the connection cap (ConnectionCap.swift).
                .nioHTTPTypes,
                // The outbox's delivery runs beside the server as one of its services.
                .serviceLifecycle,
                // scrypt, for the users file's password hashes (WebUsers.swift).
                .crypto, .cryptoExtras,
            ]
        ),
        .executableTarget(
            name: "reconcile",
            dependencies: [
                "Reconciliation", "ReviewWeb", "Postgres", "AppStore",
                .argumentParser, .logging, .configuration, .serviceLifecycle,
            ]
        ),
        .executableTarget(
            name: "appstore-sim",
            dependencies: ["AppStoreSimulator", .argumentParser, .logging, .serviceLifecycle]
        ),

        // Seeds the demo's database with uploads signed by the simulator's CA (scripts/demo only).
        .executableTarget(
            name: "demo-seed",
            dependencies: [
                "Postgres", "AppStore", "AppStoreSimulator", .argumentParser,
                // For the SQL files (sql/demo/), embedded in it with the rest of sql/.
                "Reconciliation",
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
                "GooglePlay",
                .argumentParser,
                .asyncHTTPClient,
                .crypto,
                .cryptoExtras,
                .logging,
                .nioCore,
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

        // Shared by the test targets: a fresh database per suite on the throwaway cluster, migrated
        // to the job's schema when asked, and the rows the tests plant in it (uploads, ledger rows,
        // purchases made on the simulator).
        .target(
            name: "TestSupport",
            dependencies: [
                "Postgres", "Reconciliation", "AppStoreSimulator",
                // A local server standing for the app's webhook (WebhookServer).
                .hummingbird, .logging,
            ],
            path: "Tests/TestSupport"),
        // Shared by the AppStore and Reconciliation tests: a forger's certificate authority.
        .target(
            name: "AppStoreTestSupport",
            dependencies: ["AppStore", .crypto, .swiftASN1, .x509],
            path: "Tests/AppStoreTestSupport"
        ),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"]),
        .testTarget(
            name: "AppStoreTests",
            dependencies: [
                "AppStore", "AppStoreSimulator", "AppStoreTestSupport", .propertyBased, .swiftASN1,
                // The simulated Google Play's signatures and JWTs, checked with swift-crypto directly, and
                // a local push endpoint for its notifications (PlaySimulatorTests).
                .crypto, .cryptoExtras, .hummingbird,
            ],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "GooglePlayTests",
            dependencies: [
                "GooglePlay", "AppStore", "AppStoreSimulator", .crypto, .cryptoExtras, .asyncHTTPClient, .logging,
                // A scripted Google on loopback for the Developer API client's tests.
                .hummingbird,
            ],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "ReconciliationTests",
            dependencies: [
                "Reconciliation", "Postgres", "AppStore", "AppStoreSimulator", "TestSupport", "AppStoreTestSupport",
                .crypto, .x509,
                // Google Play licence keys and signed purchases for the Play scenarios.
                .cryptoExtras,
                // A real HTTP server for the outbox webhook's tests.
                .hummingbird,
                // report.html's parts, checked as the template reads them.
                .mustache,
            ]
        ),
        .testTarget(
            name: "ReviewWebTests",
            dependencies: [
                "ReviewWeb", "Reconciliation", "Postgres", "TestSupport", .hummingbirdTesting, .logging,
                // Refund requests answered against the simulator, for the pages that show them.
                "AppStore", "AppStoreSimulator",
                // Pub/Sub's pushes to the receiver's Play path, over real HTTP.
                .asyncHTTPClient,
                // The desk page's view models, checked as the templates read them.
                .mustache,
            ]
        ),
    ]
)

for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}
