import Testing

// The tags `scripts/test --fast` leaves suites out by (and `swift test --skip tag:NAME`, where supported). Tags are
// matched by name, so each test target that uses one declares it.
extension Tag {
    /// Starts a private gpsd (Testbed): needs the gpsd binary and takes seconds.
    @Tag static var gpsd: Self
    /// Runs headless Chromium.
    @Tag static var browser: Self
    /// Replays long captures through the simulation: seconds to tens of seconds.
    @Tag static var slow: Self
}
