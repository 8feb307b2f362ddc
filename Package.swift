// swift-tools-version:6.0
import PackageDescription

// The module graph of docs/architecture.md: every arrow points down this list, never up.
let package = Package(
    name: "Lodestar",
    products: [
        .library(name: "Lodestar", targets: ["Lodestar"]),
        .library(name: "GPSModel", targets: ["GPSModel"]),
        .library(name: "GPSD", targets: ["GPSD"]),
        .library(name: "Policy", targets: ["Policy"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "Simulation", targets: ["Simulation"]),
        .library(name: "Receivers", targets: ["Receivers"]),
        .library(name: "GPIOLines", targets: ["GPIOLines"]),
        .library(name: "Forwarding", targets: ["Forwarding"]),
        .library(name: "LocationStore", targets: ["LocationStore"]),
        .library(name: "MQTTUpload", targets: ["MQTTUpload"]),
        .library(name: "HTTPUpload", targets: ["HTTPUpload"]),
        .library(name: "Daemon", targets: ["Daemon"]),
        .executable(name: "lodestar", targets: ["LodestarMain"]),
        // Test infrastructure for the VM rig (scripts/vm-test): the emulated receiver as a host process.
        .executable(name: "receiver-emulator", targets: ["ReceiverEmulatorMain"]),
    ],
    targets: [
        // libgps through one shim header of static inline functions, linked statically from libgps.a
        // (Sources/CGPS/module.modulemap); only GPSD imports it.
        .systemLibrary(
            name: "CGPS",
            path: "Sources/CGPS",
            providers: [.apt(["libgps-dev"])]
        ),
        // libgpiod 1.x or 2.x (GPIO character device; shim.h hides which), for receivers switched by an enable line;
        // only GPIOLines imports it.
        .systemLibrary(
            name: "CGPIOD",
            path: "Sources/CGPIOD",
            pkgConfig: "libgpiod",
            providers: [.apt(["libgpiod-dev"])]
        ),
        // SQLite 3, for the location store; only LocationStore imports it.
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // libmosquitto, the MQTT client for OwnTracks uploads; only MQTTUpload imports it. Opened with dlopen on
        // first use, not linked: no pkgConfig, whose `--libs` would link it (Sources/CMosquitto/shim.h says why).
        .systemLibrary(
            name: "CMosquitto",
            path: "Sources/CMosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // libcurl, the HTTP client for Traccar (OsmAnd) uploads; only HTTPUpload imports it. Opened with dlopen on
        // first use, not linked: no pkgConfig, whose `--libs` would link it (Sources/CCurl/shim.h says why).
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // glibc's malloc.h (its allocator settings), which Swift's Glibc module leaves out; only SystemInterface
        // imports it.
        .systemLibrary(
            name: "CMalloc",
            path: "Sources/CMalloc"
        ),
        // glibc's spawn.h extension that closes a child's inherited descriptors, which Swift's Glibc module
        // leaves out; only SystemInterface imports it.
        .systemLibrary(
            name: "CSpawn",
            path: "Sources/CSpawn"
        ),
        // Thin wrappers over the operating system: errno-carrying errors, EINTR retries, files, the
        // monotonic clock, threads, child processes, the allocator's settings, and the Logger the daemon is
        // handed.
        .target(name: "SystemInterface", dependencies: ["CMalloc", "CSpawn"]),
        .target(name: "GPSModel"),
        // The one JSON scanner, value tree and writer: gpsd lines, captures, profiles and command output.
        .target(name: "JSON"),
        .target(name: "GPSD", dependencies: ["CGPS", "GPSModel", "JSON", "SystemInterface"]),
        // The pure power policy of docs/contract.md: events in, actions out, no clock and no I/O.
        .target(name: "Policy", dependencies: ["GPSModel", "JSON"]),
        .target(name: "Capture", dependencies: ["GPSModel", "GPSD", "JSON", "SystemInterface"]),
        .target(name: "Simulation", dependencies: ["GPSModel", "GPSD", "Capture", "Policy"]),
        .target(name: "Receivers", dependencies: ["GPSModel", "GPSD", "Policy", "SystemInterface"]),
        // A receiver's enable line on a GPIO chip, as a PowerSwitch.
        .target(name: "GPIOLines", dependencies: ["CGPIOD", "Receivers", "SystemInterface"]),
        // Store and forward, pure: why a location was delivered, the OwnTracks and OsmAnd payloads, when a
        // batch goes out (UploadScheduler), and the transport protocol the uploaders implement.
        .target(name: "Forwarding", dependencies: ["GPSModel", "JSON"]),
        // The SQLite store of delivered locations and events, with each uploader's queue position.
        .target(name: "LocationStore", dependencies: ["CSQLite", "Forwarding", "GPSModel", "JSON", "SystemInterface"]),
        // OwnTracks over MQTT (libmosquitto).
        .target(name: "MQTTUpload", dependencies: ["CMosquitto", "Forwarding", "GPSModel", "SystemInterface"]),
        // Traccar's OsmAnd protocol over HTTP(S) (libcurl).
        .target(name: "HTTPUpload", dependencies: ["CCurl", "Forwarding", "GPSModel", "SystemInterface"]),
        // The emulated receiver behind a pseudo-terminal, a private gpsd and the capture feeder: what `lodestar demo`,
        // `lodestar replay --through-gpsd` and `receiver-emulator` are made of, and the tests too; never the library.
        .target(
            name: "ReceiverEmulation",
            dependencies: ["GPSModel", "GPSD", "Capture", "Policy", "Simulation", "Receivers", "SystemInterface"]),
        // Test infrastructure for the test targets only (like swift-nio's NIOTestUtils): the repository's captures,
        // waits, the gpsd test bed, the servers the uploaders are tested against, and the tags.
        .target(
            name: "TestSupport",
            dependencies: ["ReceiverEmulation", "Simulation", "GPSModel", "GPSD", "Capture", "SystemInterface"]),
        .target(
            name: "Lodestar",
            dependencies: [
                "GPSModel", "GPSD", "JSON", "Policy", "Capture", "Simulation", "Receivers", "SystemInterface",
            ]),
        // What `lodestar run` is made of: its config, outputs, persisted state, status and systemd notifications.
        .target(
            name: "Daemon",
            dependencies: [
                "Lodestar", "Receivers", "GPIOLines", "Policy", "Capture", "GPSD", "JSON", "GPSModel", "SystemInterface",
                "Forwarding", "LocationStore", "MQTTUpload", "HTTPUpload",
            ]),
        .target(
            name: "LodestarCLI",
            dependencies: [
                "Daemon", "Lodestar", "ReceiverEmulation", "Receivers", "GPIOLines", "Simulation", "Capture", "Policy",
                "GPSD", "JSON", "GPSModel", "SystemInterface", "LocationStore", "Forwarding",
            ],
            plugins: ["EmbedDemoCapture"]),
        .executableTarget(name: "LodestarMain", dependencies: ["LodestarCLI"]),
        // The emulated receiver on a pty as a process of its own, for the VM rig; never in the lodestar product.
        .executableTarget(
            name: "ReceiverEmulatorMain",
            dependencies: ["ReceiverEmulation", "Lodestar", "Capture", "Policy", "Receivers", "SystemInterface"]),
        // The demo's capture compiled into LodestarCLI at build time, from the fixture (one copy of its bytes).
        .executableTarget(name: "EmbedCapture", dependencies: ["Capture", "SystemInterface"]),
        .plugin(name: "EmbedDemoCapture", capability: .buildTool(), dependencies: ["EmbedCapture"]),
        // Test targets follow the modules they test; TestSupport is their shared test utility module.
        .testTarget(name: "GPSModelTests", dependencies: ["GPSModel"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(
            name: "GPSDTests", dependencies: ["GPSD", "GPSModel", "Capture", "ReceiverEmulation", "TestSupport"]),
        .testTarget(name: "PolicyTests", dependencies: ["Policy", "GPSModel", "TestSupport"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "GPSD", "GPSModel", "TestSupport"]),
        .testTarget(name: "SimulationTests", dependencies: ["Simulation", "Capture", "Policy", "GPSModel"]),
        .testTarget(
            name: "ReceiverEmulationTests",
            dependencies: [
                "ReceiverEmulation", "TestSupport", "Receivers", "Simulation", "Policy", "GPSD", "GPSModel",
                "SystemInterface",
            ]),
        .testTarget(
            name: "ReceiversTests",
            dependencies: ["Receivers", "TestSupport", "Policy", "GPSD", "GPSModel", "SystemInterface"]),
        .testTarget(name: "ForwardingTests", dependencies: ["Forwarding", "GPSModel", "JSON", "TestSupport"]),
        .testTarget(name: "LocationStoreTests", dependencies: ["LocationStore", "Forwarding", "GPSModel", "SystemInterface"]),
        .testTarget(
            name: "MQTTUploadTests",
            dependencies: ["MQTTUpload", "Forwarding", "ReceiverEmulation", "TestSupport", "GPSModel", "SystemInterface"]),
        .testTarget(
            name: "HTTPUploadTests", dependencies: ["HTTPUpload", "Forwarding", "TestSupport", "GPSModel", "JSON", "SystemInterface"]),
        .testTarget(name: "GPIOLinesTests", dependencies: ["GPIOLines", "Receivers", "SystemInterface"]),
        .testTarget(
            name: "LodestarTests",
            dependencies: [
                "Lodestar", "ReceiverEmulation", "TestSupport", "Simulation", "Capture", "Policy", "Receivers", "GPSD",
                "GPSModel", "SystemInterface",
            ]),
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "Daemon", "Lodestar", "ReceiverEmulation", "TestSupport", "Receivers", "GPIOLines", "Policy", "Capture",
                "GPSD", "JSON", "GPSModel", "SystemInterface", "LocationStore", "Forwarding",
            ]),
        .testTarget(
            name: "LodestarCLITests",
            dependencies: [
                "LodestarCLI", "Lodestar", "ReceiverEmulation", "TestSupport", "Simulation", "Capture", "Policy", "GPSD",
                "JSON", "GPSModel", "SystemInterface", "LocationStore", "Forwarding", "Daemon", "Receivers",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
