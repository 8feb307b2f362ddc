import PackagePlugin

/// Compiles the demo's capture into the target that uses it (LodestarCLI): the fixture in
/// Tests/Fixtures/captures stays the one copy, with its licence in SOURCES.md beside it, and SwiftPM rebuilds
/// the generated source when it changes. SwiftPM's `.embedInCode` resource would do this without a tool, but
/// it writes the bytes as an array literal, which takes the compiler minutes to type-check at this size.
@main
struct EmbedDemoCapture: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let capture = context.package.directoryURL
            .appending(components: "Tests", "Fixtures", "captures", "aircraft-descent-landing-18m.nmea")
        let source = context.pluginWorkDirectoryURL.appending(component: "DemoCapture.swift")
        return [
            .buildCommand(
                displayName: "Embedding the demo capture \(capture.lastPathComponent)",
                executable: try context.tool(named: "EmbedCapture").url,
                arguments: [capture.path(), source.path()],
                inputFiles: [capture],
                outputFiles: [source])
        ]
    }
}
