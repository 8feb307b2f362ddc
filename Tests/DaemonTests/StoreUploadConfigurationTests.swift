import Daemon
import GPSModel
import Testing

/// The `store`, `upload` and `coordinates` keys of `lodestar run`'s config (docs/config.md).
@Suite struct StoreUploadConfigurationTests {
    private func read(_ text: String) throws(DaemonConfigurationError) -> DaemonConfiguration {
        try DaemonConfigurationReader.parse(Array(text.utf8), file: "test.json").configuration
    }

    private func problems(_ text: String) -> [String] {
        do throws(DaemonConfigurationError) {
            _ = try read(text)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func theDefaultsKeepAStoreAndUploadNowhere() {
        let configuration = DaemonConfiguration()
        #expect(configuration.store == DaemonConfiguration.StoreSettings())
        #expect(configuration.store?.path == "store.sqlite")
        #expect(configuration.upload.names.isEmpty)
        #expect(configuration.coordinates == .wgs84)
    }

    @Test func everyStoreAndUploadKeyIsRead() throws {
        let configuration = try read(
            """
            {"store": {"path": "/data/s.sqlite", "maxBytes": 1048576, "maxAgeDays": 30},
             "upload": {"maxBatchAge": 0, "uploadWhileAsleep": false, "initialBackoff": 5, "maxBackoff": 60,
                        "owntracks": {"host": "broker.example", "port": 8884, "user": "pi", "device": "van",
                                      "trackerID": "VN", "username": "van", "password": "secret", "tls": true,
                                      "caFile": "/etc/ssl/ca.pem", "insecure": true, "timeout": 12},
                        "traccar": {"url": "https://traccar.example:5055", "deviceID": "van-7731", "method": "get",
                                    "batterySource": "/sys/class/power_supply/BAT0/capacity", "caFile": null,
                                    "insecure": false, "username": "u", "password": "p", "timeout": 9}},
             "coordinates": "gcj02"}
            """)
        #expect(configuration.store?.path == "/data/s.sqlite")
        #expect(configuration.store?.maxBytes == 1_048_576)
        #expect(configuration.store?.maxAgeDays == 30)
        #expect(configuration.upload.maxBatchAge == 0)
        #expect(configuration.upload.uploadWhileAsleep == false)
        #expect(configuration.upload.initialBackoff == 5)
        #expect(configuration.upload.maxBackoff == 60)
        let owntracks = try #require(configuration.upload.owntracks)
        #expect(owntracks.host == "broker.example")
        #expect(owntracks.port == 8884)
        #expect(owntracks.user == "pi" && owntracks.device == "van" && owntracks.trackerID == "VN")
        #expect(owntracks.username == "van" && owntracks.password == "secret")
        #expect(owntracks.tls && owntracks.insecure && owntracks.caFile == "/etc/ssl/ca.pem" && owntracks.timeout == 12)
        let traccar = try #require(configuration.upload.traccar)
        #expect(traccar.url == "https://traccar.example:5055" && traccar.deviceID == "van-7731")
        #expect(traccar.method == .get)
        #expect(traccar.batterySource == "/sys/class/power_supply/BAT0/capacity")
        #expect(traccar.username == "u" && traccar.password == "p" && traccar.timeout == 9)
        #expect(configuration.coordinates == .gcj02)
        #expect(configuration.upload.names == ["owntracks", "traccar"])
        // `config show` writes every key, and reading that back gives the same configuration.
        #expect(try read(configuration.jsonText) == configuration)
    }

    @Test func theStoreTurnsOffAndOn() throws {
        #expect(try read(#"{"store": null}"#).store == nil)
        #expect(try read(#"{"store": false}"#).store == nil)
        #expect(try read(#"{"store": true}"#).store == DaemonConfiguration.StoreSettings())
    }

    @Test func badValuesAreNamedByTheirKeyPath() {
        let found = problems(
            """
            {"store": {"maxBytes": 10, "maxAgeDays": 1.5},
             "upload": {"maxBatchAge": -1, "initialBackoff": 100, "maxBackoff": 10,
                        "owntracks": {"user": "a/b", "trackerID": "ABC", "port": 0},
                        "traccar": {"url": "ftp://x", "method": "put"}},
             "coordinates": "bd09"}
            """)
        let expectedPrefixes = [
            "store.maxBytes: is 10, out of range", "store.maxAgeDays: is 1.5, not a whole number",
            "upload.maxBatchAge: is -1, out of range", "upload.owntracks.user: 'a/b' cannot be an MQTT topic level",
            "upload.owntracks.device: is missing", "upload.owntracks.trackerID: 'ABC' is longer than two characters",
            "upload.owntracks.port: is 0, out of range", "upload.traccar.url: 'ftp://x' is not an http:// or https:// URL",
            "upload.traccar.deviceID: is missing (allowed: text, not empty)", "upload.traccar.method: 'put' is not a known value",
            "coordinates: 'bd09' is not a known value", "upload.maxBackoff: is 10 s, less than upload.initialBackoff",
        ]
        for prefix in expectedPrefixes {
            #expect(found.contains { $0.hasPrefix(prefix) }, "no problem starting '\(prefix)' in:\n\(found.joined(separator: "\n"))")
        }
        #expect(found.count == expectedPrefixes.count, "\(found.joined(separator: "\n"))")
    }

    @Test func uploadsWithoutAStoreAreRefused() {
        let found = problems(#"{"store": null, "upload": {"traccar": {"url": "http://t:5055", "deviceID": "x"}}}"#)
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("store: is off, but upload.traccar needs it") == true, "\(found)")
    }

    @Test func theSummaryNamesTheStoreAndTheUploaders() throws {
        let configuration = try read(
            #"{"upload": {"owntracks": {"user": "pi", "device": "van"}, "traccar": {"url": "http://t:5055", "deviceID": "v"}}, "coordinates": "gcj02"}"#
        )
        #expect(configuration.summary.contains("store /var/lib/lodestar/store.sqlite"))
        #expect(configuration.summary.contains("owntracks localhost owntracks/pi/van"))
        #expect(configuration.summary.contains("traccar http://t:5055 id v"))
        #expect(configuration.summary.hasSuffix("; coordinates gcj02"))
    }
}
