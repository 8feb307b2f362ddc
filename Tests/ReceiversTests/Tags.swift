import Testing

// The tags `scripts/test --fast` leaves suites out by. Tags are matched by name, so each test target that uses
// one declares it.
extension Tag {
    /// Starts a private gpsd (Testbed): needs the gpsd binary and takes seconds.
    @Tag static var gpsd: Self
}
