import JSON
import Policy

// The `store` and `upload` keys of the config's schema (DaemonConfigurationSchema.swift), apart so that file
// stays readable: where locations are kept and where they are sent (docs/store.md, docs/upload.md).

extension DaemonConfigurationSchema {
    static var storeAndUploadKeys: [Key] {
        let owntracks: Key.Path<DaemonConfiguration.OwnTracksUpload> = \.upload.owntracks.orDefault
        let traccar: Key.Path<DaemonConfiguration.TraccarUpload> = \.upload.traccar.orDefault
        let store: Key.Path<DaemonConfiguration.StoreSettings> = \.store.orDefault
        return [
            .text(
                "store.path", store.appending(path: \.path), .path,
                "The database file; relative: under `stateDirectory`. `lodestar store export` reads it."),
            Key(
                "store.maxBytes",
                .optionalWhole(store.appending(path: \.maxBytes), ConfigurationRanges.storeBytes, null: "no size limit"),
                "The most the file and its write-ahead log may take. Past it, the oldest rows every uploader has are "
                    + "deleted first; if that is not enough, the oldest rows not yet uploaded are dropped, with a log "
                    + "line and a count in `lodestar status`. null: no size limit."),
            Key(
                "store.maxAgeDays",
                .optionalWhole(store.appending(path: \.maxAgeDays), ConfigurationRanges.maxAgeDays, null: "no age limit"),
                "Rows every uploader has are deleted once older than this. Rows not yet uploaded are never deleted for "
                    + "age. null: no age limit."),
            Key(
                "store.syncInterval", .number(store.appending(path: \.syncInterval), ConfigurationRanges.syncInterval),
                "How often what was stored is synced to the disk, besides the syncs when the receiver goes down, after a "
                    + "deferred batch, before each upload and at stop. A power cut loses at most this many seconds of "
                    + "locations (the file is never damaged); a crash of the service alone loses at most the last 5 s, "
                    + "which are committed together. 0: every location is committed and synced as it is stored, one "
                    + "sync per fix. 300 is journald's default, for the same reason: each sync wears an SD card."),
            Key(
                "upload.maxBatchAge", .number(\.upload.maxBatchAge, ConfigurationRanges.maxBatchAge),
                "The longest a stored location waits for its batch. A batch also goes at once when the policy delivers "
                    + "a deferred batch, pauses, reports a significant change or answers a request. 0: every location "
                    + "is sent as soon as it is stored."),
            Key(
                "upload.uploadWhileAsleep", .flag(\.upload.uploadWhileAsleep),
                "false: nothing is sent while the receiver sleeps (regime off or standby), so the modem can sleep with "
                    + "it; what came due goes when it wakes."),
            Key(
                "upload.initialBackoff", .number(\.upload.initialBackoff, ConfigurationRanges.backoff),
                "After a failed send, the first retry waits about this long; each further failure doubles it, with jitter."),
            Key(
                "upload.maxBackoff", .number(\.upload.maxBackoff, ConfigurationRanges.backoff),
                allowed: "\(ConfigurationRanges.backoff.allowed), at least `initialBackoff`",
                "The longest wait between retries."),
            .text(
                "upload.owntracks.host", owntracks.appending(path: \.host), .host, allowed: "as `gpsd.host`",
                "The MQTT broker."),
            Key(
                "upload.owntracks.port",
                .optionalWhole(owntracks.appending(path: \.port), ConfigurationRanges.port, null: nil),
                "null: 1883, or 8883 with `tls`."),
            .text(
                "upload.owntracks.user", owntracks.appending(path: \.user), .topicLevel, required: true,
                "The OwnTracks user: the topic is `owntracks/<user>/<device>`."),
            .text(
                "upload.owntracks.device", owntracks.appending(path: \.device), .topicLevel, required: true,
                "The OwnTracks device."),
            Key(
                "upload.owntracks.trackerID",
                .optionalText(owntracks.appending(path: \.trackerID), .trackerID, null: "the device's last two characters"),
                "`tid`, the initials on OwnTracks' map. null: the device's last two characters."),
            Key(
                "upload.owntracks.username", .optionalText(owntracks.appending(path: \.username), .text, null: "no username"),
                "The broker's user name."),
            Key(
                "upload.owntracks.password", .optionalText(owntracks.appending(path: \.password), .text, null: "no password"),
                "The broker's password. Keep the config file readable by the service only (`0640`, group `lodestar`)."),
            Key("upload.owntracks.tls", .flag(owntracks.appending(path: \.tls)), "TLS to the broker."),
            Key(
                "upload.owntracks.caFile",
                .optionalText(owntracks.appending(path: \.caFile), .absolutePath, null: "the system's certificates"),
                "The CA certificate to check the broker's against; null: the system's."),
            Key(
                "upload.owntracks.insecure", .flag(owntracks.appending(path: \.insecure)),
                "Accept a certificate whose name does not match `host`."),
            Key(
                "upload.owntracks.timeout", .number(owntracks.appending(path: \.timeout), ConfigurationRanges.uploadTimeout),
                "The longest one connection and its batch may take."),
            .text(
                "upload.traccar.url", traccar.appending(path: \.url), .url, required: true,
                "The server's OsmAnd port, `http://traccar.example:5055`."),
            .text(
                "upload.traccar.deviceID", traccar.appending(path: \.deviceID), .text, required: true,
                "The device's identifier in Traccar."),
            Key(
                "upload.traccar.method", .choice(ConfigurationChoice(traccar.appending(path: \.method))),
                "POST with a form body (as Traccar Client sends), or GET with a query string."),
            Key(
                "upload.traccar.batterySource",
                .optionalText(traccar.appending(path: \.batterySource), .absolutePath, null: "no battery level"),
                "A file holding the battery's charge in percent (`/sys/class/power_supply/BAT0/capacity`), read at "
                    + "each send and sent as `batt`."),
            Key(
                "upload.traccar.caFile",
                .optionalText(traccar.appending(path: \.caFile), .absolutePath, null: "the system's certificates"),
                "The CA certificate to check the server's against."),
            Key("upload.traccar.insecure", .flag(traccar.appending(path: \.insecure)), "Skip checking the server's certificate."),
            Key(
                "upload.traccar.username", .optionalText(traccar.appending(path: \.username), .text, null: "no username"),
                "HTTP basic authentication's user name, for a server behind a proxy that asks for it."),
            Key(
                "upload.traccar.password", .optionalText(traccar.appending(path: \.password), .text, null: "no password"),
                "HTTP basic authentication's password."),
            Key(
                "upload.traccar.timeout", .number(traccar.appending(path: \.timeout), ConfigurationRanges.uploadTimeout),
                "The longest one request may take."),
        ]
    }
}
