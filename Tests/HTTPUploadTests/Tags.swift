import Testing

// Tags are matched by name, so each test target that uses one declares it (Tests/TestbedTests/Tags.swift).
extension Tag {
    /// Starts a local HTTP server (the Traccar stand-in, Testbed) on a free port, or talks to a real Traccar.
    @Tag static var http: Self
}
