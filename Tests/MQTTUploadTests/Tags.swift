import Testing

// The tags `scripts/test --fast` leaves suites out by (and `swift test --skip tag:NAME`, where supported). Tags are
// matched by name, so each test target that uses one declares it.
extension Tag {
    /// Starts a private mosquitto broker (Testbed's PrivateMosquitto): needs mosquitto, its clients and openssl.
    @Tag static var mosquitto: Self
}
