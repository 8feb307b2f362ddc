import Testing

// The tags of every test target, declared once. `scripts/test --fast` leaves out the suites tagged .gpsd or
// .browser (found by name in the sources; `swift test --skip tag:NAME` where supported).
extension Tag {
    /// Starts a private gpsd (`PrivateGPSD`): needs the gpsd binary and takes seconds.
    @Tag public static var gpsd: Self
    /// Runs headless Chromium.
    @Tag public static var browser: Self
    /// Replays long captures through the simulation: seconds to tens of seconds.
    @Tag public static var slow: Self
    /// Starts a local HTTP server (the Traccar stand-in, `OsmAndStandIn`) on a free port, or talks to a real Traccar.
    @Tag public static var http: Self
    /// Starts a private mosquitto broker (`PrivateMosquitto`): needs mosquitto, its clients and openssl.
    @Tag public static var mosquitto: Self
}
