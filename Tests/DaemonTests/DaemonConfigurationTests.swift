import Daemon
import Testing

@Suite struct DaemonConfigurationDefaultsTests {
    @Test func relativePathsResolveUnderTheirDirectory() {
        #expect(DaemonConfiguration.resolve("track/a.jsonl", under: "/var/lib/lodestar") == "/var/lib/lodestar/track/a.jsonl")
        #expect(DaemonConfiguration.resolve("/tmp/a", under: "/var/lib/lodestar") == "/tmp/a")
    }
}
