// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Lodestar",
    products: [
        .library(name: "Lodestar", targets: ["Lodestar"]),
        .library(name: "GPSModel", targets: ["GPSModel"]),
        .library(name: "GPSD", targets: ["GPSD"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "Policy", targets: ["Policy"]),
        .executable(name: "lodestar", targets: ["lodestar"]),
    ],
    targets: [
        // The only C in the package: libgps through one shim header of static inline functions.
        .systemLibrary(
            name: "CGPS",
            path: "Sources/CGPS",
            providers: [.apt(["libgps-dev"])]
        ),
        .target(name: "GPSModel"),
        .target(name: "GPSD", dependencies: ["CGPS", "GPSModel"]),
        // The pure power policy of SPEC.md §2–§8: events in, actions out, no clock and no I/O.
        .target(name: "Policy", dependencies: ["GPSModel"]),
        .target(name: "Capture", dependencies: ["GPSModel", "GPSD"]),
        .target(name: "Lodestar", dependencies: ["GPSModel", "GPSD", "Capture", "Policy"]),
        .target(name: "LodestarCLI", dependencies: ["Lodestar", "Capture", "GPSModel", "GPSD"]),
        .executableTarget(name: "lodestar", dependencies: ["LodestarCLI"]),
        .testTarget(name: "GPSModelTests", dependencies: ["GPSModel"]),
        .testTarget(name: "GPSDTests", dependencies: ["GPSD", "GPSModel"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "GPSD", "GPSModel"]),
        .testTarget(name: "PolicyTests", dependencies: ["Policy", "GPSModel"]),
        .testTarget(
            name: "LodestarTests",
            dependencies: ["Lodestar", "LodestarCLI", "Capture", "GPSD", "GPSModel", "Policy"],
            resources: []
        ),
        .testTarget(
            name: "LodestarCLITests", dependencies: ["LodestarCLI", "Lodestar", "Capture", "GPSD", "GPSModel"]),
    ],
    swiftLanguageModes: [.v6]
)
