import GPSModel
import JSON
import Policy

// The config of `lodestar run` as a file: `config show` prints it, every key with its value, by walking
// `DaemonConfigurationSchema.tree` (DaemonConfigurationSchema.swift), so the order is the schema's and that of
// docs/config.md; the reader reads it back to an equal configuration. And the one-line summary of
// `config validate`.

extension DaemonConfiguration {
    /// The complete config as a file: every key, defaults written out, in the order of docs/config.md.
    /// `lodestar config show` prints it; the reader reads it back to an equal configuration.
    public var jsonText: String { JSONWriter.text(jsonValue) }

    package var jsonValue: JSONValue {
        DaemonConfigurationSchema.tree.jsonValue(of: self, optionalObjects: DaemonConfigurationSchema.sections) {
            $0.jsonValue(in: $1)
        }
    }

    /// One line for `lodestar config validate`: profile, gpsd, receiver control, the outputs that are on.
    public var summary: String {
        var on: [String] = []
        if let jsonl = outputs.jsonl { on.append("jsonl \(Self.resolve(jsonl.path, under: stateDirectory))") }
        if let gpx = outputs.gpx { on.append("gpx \(Self.resolve(gpx.directory, under: stateDirectory))") }
        if let stdout = outputs.stdout { on.append("stdout \(stdout.format.rawValue)") }
        if let socket = outputs.socket { on.append("socket \(Self.resolve(socket.path, under: runtimeDirectory))") }
        if let capture = outputs.capture { on.append("capture \(Self.resolve(capture.path, under: stateDirectory))") }
        let control: String =
            switch (receiver.powerControl, receiver.powerSwitch) {
            case (false, _): "no power control"
            case (true, nil): "power control"
            case (true, .usbPort): "power control, USB port switch"
            case (true, .gpio(let chip, let line, _)): "power control, GPIO switch \(chip) line \(line)"
            }
        let device = gpsd.device ?? "first device"
        var forwarding: [String] = []
        if let store { forwarding.append("store \(Self.resolve(store.path, under: stateDirectory))") }
        if let owntracks = upload.owntracks {
            forwarding.append("owntracks \(owntracks.host) owntracks/\(owntracks.user)/\(owntracks.device)")
        }
        if let traccar = upload.traccar { forwarding.append("traccar \(traccar.url) id \(traccar.deviceID)") }
        return "profile \(profile); gpsd \(gpsd.host):\(gpsd.port) \(device); "
            + "receiver \(receiver.connection?.rawValue ?? "auto"), \(control); "
            + "outputs: \(on.isEmpty ? "none" : on.joined(separator: ", "))"
            + (forwarding.isEmpty ? "" : "; \(forwarding.joined(separator: ", "))")
            + (motion.map { "; motion GPIO \($0.chip) line \($0.line)" } ?? "")
            + (motionIIO.map { "; motion IIO \($0.device)" } ?? "")
            + (coordinates == .wgs84 ? "" : "; coordinates \(coordinates.rawValue)")
    }
}
