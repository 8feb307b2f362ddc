import JSON
import Policy

// docs/config.md's tables of keys, generated from the schema (DaemonConfigurationSchema.swift) as
// docs/profiles.md's is from a profile's: `lodestar config schema` prints them, scripts/update-profiles-doc puts
// them between the document's markers, and a test fails while the document differs.

extension DaemonConfigurationSchema {
    package static let markdownBegin = "<!-- generated: lodestar config schema -->"
    package static let markdownEnd = "<!-- end generated -->"

    /// What a table of one top-level object cannot say in its rows: before its table and after it.
    private static let notes: [String: (before: String?, after: String?)] = [
        "receiver": (
            nil,
            """
            `receiver.powerSwitch` is one of:

            | Form | Keys | Meaning |
            |---|---|---|
            | `{"type": "gpio", "chip": "gpiochip0", "line": 17, "activeLow": false}` | `chip`: `gpiochipN` or a path like `/dev/gpiochip0`, default `"gpiochip0"`; `line`: required, \(ConfigurationRanges.gpioLine.allowed) (the line's offset on the chip, not the header pin number); `activeLow`: boolean, default false (true: the line low means the receiver is on) | An enable line driven through the GPIO character device. |
            | `{"type": "usbPort"}` | none other | The power of the USB hub port the receiver is plugged into (Linux 6.0 or later, and a hub that really switches its ports). |
            """
        ),
        "motion": (
            nil,
            """
            `motion.gpio` is null or `{"chip": "gpiochip0", "line": 27, "activeLow": false, "debounce": 1, \
            "ignition": false}`: `chip` as for the power switch, default `"gpiochip0"`; `line`: required, \
            \(ConfigurationRanges.gpioLine.allowed) (the line's offset); `activeLow`: boolean, default false (true: the \
            line low means motion, as an opto-coupler pulls it); `debounce`: \
            \(ConfigurationRanges.motionDebounce.allowed), default 1 (activations within this of a hint are one with \
            it; for the ignition, how long its level holds before it is taken); `ignition`: boolean, default false \
            (true: the line is the ignition and its level says whether the engine runs). An edge to the active level \
            is a motion hint: a vibration switch, an accelerometer's interrupt pin, the ignition. With `ignition`, the \
            level is read as the run starts and after each change: the engine off leaves a parked pause to the line, \
            running keeps its probes ([policy.md](policy.md#motion-hints)). The daemon runs the profile with \
            `policy.motion.sensor` on.

            `motion.iio` is null or `{"device": "mpu6050", "threshold": 0.5, "sampleInterval": 0.2, "debounce": 1}`: \
            an accelerometer with a Linux IIO driver, sampled. `device`: required, the device's folder under \
            `/sys/bus/iio/devices` (`"iio:device0"`), an absolute path to one, or the name its driver gives it (its \
            `name` file: `"mpu6050"`, `"adxl345"`); `threshold`: \
            \(ConfigurationRanges.accelerationThreshold.allowed), default 0.5 (a sample that differs from the average \
            of the last seconds by more than this is motion; the average follows gravity and how the sensor is \
            mounted); `sampleInterval`: \(ConfigurationRanges.sampleInterval.allowed), default 0.2; `debounce`: as \
            for `motion.gpio`. Motion is a hint, as an edge of `motion.gpio` is. One motion source at a time: \
            `motion.gpio` or `motion.iio`. An accelerometer's motion interrupt pin, where its driver does not give \
            it to IIO, can go to `motion.gpio` instead, and then nothing is sampled.
            """
        ),
        "outputs": (
            "Each output is off with `null` or `false`, on with its defaults with `true`, or on with an object whose keys\n"
                + "are set over the defaults.",
            nil
        ),
        "store": ("Off with `null` or `false`, on with its defaults with `true`, or on with an object. Uploads need it.", nil),
        "upload": (
            "Each uploader is off with `null` or `false` and on with an object; `true` is refused, as an uploader has no\n"
                + "default for where it sends. Its keys marked required must then be given.",
            nil
        ),
    ]

    /// The lines docs/config.md holds between `markdownBegin` and `markdownEnd`: a table of the top-level
    /// keys, then one per top-level object.
    package static var markdown: String {
        guard case .object(_, let top) = tree else { return "" }
        let documents = Document()
        var sections = ["### Top level\n\n" + documents.table(top.map { ($0.node, $0.name, true) })]
        for (name, node) in top {
            guard case .object = node else { continue }
            var text = "### `\(name)`\n\n"
            if let before = notes[name]?.before { text += before + "\n\n" }
            text += documents.table(Array(documents.rows(node, path: name).dropFirst()))
            if let after = notes[name]?.after { text += "\n" + after + "\n" }
            sections.append(text)
        }
        return sections.joined(separator: "\n")
    }

    /// The values the rows show.
    private struct Document {
        let defaults = DaemonConfiguration()
        /// Every section on, so a key of one that is off by default shows its default too.
        let everyDefault: DaemonConfiguration
        let sections = DaemonConfigurationSchema.sections

        init() {
            var configuration = DaemonConfiguration()
            for section in DaemonConfigurationSchema.sections { section.setOn(&configuration) }
            everyDefault = configuration
        }

        /// An object's row, then its members' rows, depth first.
        func rows(_ node: Node, path: String) -> [(node: Node, path: String, summary: Bool)] {
            guard case .object(_, let members) = node else { return [(node, path, false)] }
            return [(node, path, false)] + members.flatMap { rows($0.node, path: Node.join(path, $0.name)) }
        }

        /// `summary`: an object said in one row whose keys come in a table of their own.
        func table(_ rows: [(node: Node, path: String, summary: Bool)]) -> String {
            let lines =
                [
                    ConfigurationMarkdown.row(["key", "type", "default", "allowed", "meaning"]), "|---|---|---|---|---|",
                ] + rows.map { row($0.node, path: $0.path, summary: $0.summary) }
            return lines.joined(separator: "\n") + "\n"
        }

        func row(_ node: Node, path: String, summary: Bool) -> String {
            let cells: [String]
            switch node {
            case .key(let key):
                cells = [type(key.kind), defaultText(key), allowed(key), key.meaning]
            case .object:
                if let section = sections.first(where: { $0.path == path }) {
                    cells = [
                        section.trueGivesDefaults ? "object, null or boolean" : "object or null",
                        section.isOn(defaults) ? "on" : "off", summary ? "see below" : "", section.meaning,
                    ]
                } else {
                    let meaning = DaemonConfigurationSchema.objects.first { $0.path == path }?.meaning ?? ""
                    cells = ["object", summary ? "see below" : "", "", meaning]
                }
            }
            return ConfigurationMarkdown.row(["`\(path)`"] + cells)
        }

        private func type(_ kind: Key.Kind) -> String {
            switch kind {
            case .text, .choice: "string"
            case .optionalText: "string or null"
            case .flag: "boolean"
            case .number: "number"
            case .optionalWhole: "number or null"
            case .custom(let custom): custom.type
            }
        }

        private func defaultText(_ key: Key) -> String {
            if case .text(_, _, required: true) = key.kind { return "required" }
            return ConfigurationMarkdown.value(key.jsonValue(in: everyDefault))
        }

        private func allowed(_ key: Key) -> String {
            if let documented = key.documentedAllowed { return documented }
            switch key.kind {
            case .text(_, let kind, _), .optionalText(_, let kind, _): return kind.allowed
            case .flag: return ""
            case .number(_, let range), .optionalWhole(_, let range, _): return range.allowed
            case .choice(let choice): return ConfigurationMarkdown.quoted(choice.names)
            case .custom(let custom): return custom.allowed
            }
        }
    }
}
