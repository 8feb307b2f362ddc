import JSON
import Policy

// The one pass over a config document (DaemonConfigurationReader.swift reads the file and applies the flags
// first): each key of `DaemonConfigurationSchema.tree` present is read into a configuration that already holds
// the defaults, so a missing or bad key leaves its default and the walk goes on to find the rest. An object's
// unknown keys are reported first (with the known key nearest a typo), then its known ones in the schema's order.

/// Walks the document into a configuration that starts as the defaults, collecting every problem.
struct DaemonConfigurationWalker: ConfigurationTreeReader {
    typealias Members = [String: JSONValue]
    var problems: [DaemonConfigurationProblem] = []

    private static func join(_ parent: String, _ key: String) -> String { DaemonConfigurationSchema.Node.join(parent, key) }

    private mutating func report(_ path: String, _ message: String) {
        problems.append(DaemonConfigurationProblem(keyPath: path, message: message))
    }

    /// The members of an object, unknown keys reported with the closest known one; nil (reported) when
    /// `value` is not an object.
    mutating func members(_ value: JSONValue, at path: String, keys: [String]) -> Members? {
        guard case .object(let list) = value else {
            let subject = path.isEmpty ? "the document is" : "is"
            let allowed = "an object with keys: \(keys.joined(separator: ", "))"
            report(path, "\(subject) \(value.typeName), not an object (allowed: \(allowed))")
            return nil
        }
        let checked = ConfigurationMembers(list, allowed: keys)
        for (key, suggestion) in checked.unknown {
            report(
                Self.join(path, key),
                "\(ConfigurationMembers.unknownKey(suggestion)) (allowed: \(keys.joined(separator: ", ")))")
        }
        return checked.known
    }

    /// A key that is null or an object: the object's members for the caller to read; nil when `value` is null
    /// (`target` is then nil) or not an object (reported, saying what `allowed` besides null).
    mutating func objectOrNull<Target>(
        _ value: JSONValue, at path: String, _ target: inout Target?, allowed: String
    ) -> [(key: String, value: JSONValue)]? {
        if case .null = value {
            target = nil
            return nil
        }
        guard case .object(let list) = value else {
            report(path, "is \(value.typeName), not an object (allowed: null for none, or \(allowed))")
            return nil
        }
        return list
    }

    mutating func configuration(_ document: JSONValue) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        read(
            DaemonConfigurationSchema.tree, document, at: "", optionalObjects: DaemonConfigurationSchema.sections,
            into: &configuration)
        checkCombinations(configuration)
        return configuration
    }

    /// An uploader's address has no default: a present uploader must give it.
    mutating func missing(_ key: DaemonConfigurationKey, at path: String) {
        if case .text(_, let kind, required: true) = key.kind { report(path, "is missing (allowed: \(kind.allowed))") }
    }

    /// An output, the store or an uploader: false turns it off as null does, and true (where
    /// `trueGivesDefaults`) on with its defaults.
    mutating func optional(
        _ section: DaemonConfigurationSection, _ value: JSONValue, keys: [String], into configuration: inout DaemonConfiguration
    ) {
        switch value {
        case .bool(false): section.setOff(&configuration)
        case .bool(true) where section.trueGivesDefaults: section.setOn(&configuration)
        default:
            let onWithDefaults = section.trueGivesDefaults ? "true for the defaults, " : ""
            report(
                section.path,
                "is \(value.typeName), not an object (allowed: null or false for \(section.offMeans), "
                    + "\(onWithDefaults)or an object with keys: \(keys.joined(separator: ", ")))")
        }
    }

    /// Reads one key; a value of the wrong type or not allowed is reported and leaves the default.
    mutating func read(_ key: DaemonConfigurationKey, _ value: JSONValue, into configuration: inout DaemonConfiguration) {
        let path = key.path
        switch key.kind {
        case .text(let target, let kind, _):
            if let text = string(value, at: path, kind) { configuration[keyPath: target] = text }
        case .optionalText(let target, let kind, let null):
            switch value {
            case .null: configuration[keyPath: target] = nil
            case .string: if let text = string(value, at: path, kind) { configuration[keyPath: target] = text }
            default: report(path, "is \(value.typeName), not a string or null (allowed: \(kind.allowed); null: \(null))")
            }
        case .flag(let target):
            if let flag = flag(value, at: path) { configuration[keyPath: target] = flag }
        case .number(let target, let range):
            if let number = number(value, at: path, range, null: nil) { configuration[keyPath: target] = number }
        case .optionalWhole(let target, let range, let null):
            if case .null = value {
                configuration[keyPath: target] = nil
            } else if let number = number(value, at: path, range, null: null) {
                configuration[keyPath: target] = Int(number)
            }
        case .choice(let choice):
            if let text = self.choice(value, at: path, choice.names) { _ = choice.set(&configuration, text) }
        case .custom(let custom):
            custom.read(&self, value, path, &configuration)
        }
    }

    private mutating func string(_ value: JSONValue, at path: String, _ kind: TextKind) -> String? {
        guard case .string(let text) = value else {
            report(path, "is \(value.typeName), not a string (allowed: \(kind.allowed))")
            return nil
        }
        if let problem = kind.problem(text) {
            report(path, problem)
            return nil
        }
        return text
    }

    private mutating func flag(_ value: JSONValue, at path: String) -> Bool? {
        guard case .bool(let flag) = value else {
            report(path, "is \(value.typeName), not true or false")
            return nil
        }
        return flag
    }

    private mutating func choice(_ value: JSONValue, at path: String, _ allowed: [String]) -> String? {
        let list = allowed.joined(separator: ", ")
        guard case .string(let text) = value else {
            report(path, "is \(value.typeName), not a string (allowed: \(list))")
            return nil
        }
        guard allowed.contains(text) else {
            let hint = ConfigurationMembers.hint(ConfigurationMembers.closest(to: text, in: allowed))
            report(path, "'\(text)' is not a known value\(hint) (allowed: \(list))")
            return nil
        }
        return text
    }

    /// A number in `range`; `null` says what null means where it is allowed, for the message.
    private mutating func number(_ value: JSONValue, at path: String, _ range: NumberRange, null: String?) -> Double? {
        guard case .number(let number) = value else {
            let expected = null == nil ? "a number" : "a number or null"
            let nullText = null.map { "; null: \($0)" } ?? ""
            report(path, "is \(value.typeName), not \(expected) (allowed: \(range.allowed)\(nullText))")
            return nil
        }
        if let why = range.problem(with: number) {
            report(path, "is \(JSONWriter.numberText(number)), \(why) (allowed: \(range.allowed))")
            return nil
        }
        return number
    }

    // MARK: Values of a form of their own

    /// `{"type": "usbPort"}`, or `{"type": "gpio", "chip": …, "line": …, "activeLow": …}`: which keys are
    /// allowed depends on the type, so the type is read first.
    mutating func powerSwitch(
        _ value: JSONValue, at path: String, _ target: inout DaemonConfiguration.PowerSwitchSettings?
    ) {
        let types = ["gpio", "usbPort"]
        guard let list = objectOrNull(value, at: path, &target, allowed: "an object with type gpio or usbPort") else {
            return
        }
        guard let typeValue = list.first(where: { $0.key == "type" })?.value else {
            report(Self.join(path, "type"), "is missing (allowed: \(types.joined(separator: ", ")))")
            return
        }
        guard let type = choice(typeValue, at: Self.join(path, "type"), types) else { return }
        if type == "usbPort" {
            if members(value, at: path, keys: ["type"]) != nil { target = .usbPort }
            return
        }
        guard let gpio = members(value, at: path, keys: ["type", "chip", "line", "activeLow"]) else { return }
        var chip = "gpiochip0"
        var activeLow = false
        if let value = gpio["chip"], let text = string(value, at: Self.join(path, "chip"), .chip) { chip = text }
        if let value = gpio["activeLow"], let flag = flag(value, at: Self.join(path, "activeLow")) { activeLow = flag }
        guard let lineValue = gpio["line"] else {
            report(Self.join(path, "line"), "is missing (allowed: \(ConfigurationRanges.gpioLine.allowed))")
            return
        }
        if let line = number(lineValue, at: Self.join(path, "line"), ConfigurationRanges.gpioLine, null: nil) {
            target = .gpio(chip: chip, line: Int(line), activeLow: activeLow)
        }
    }

    /// `{"chip": …, "line": …, "activeLow": …, "debounce": …, "ignition": …}`: only `line` is required.
    mutating func motion(_ value: JSONValue, at path: String, _ target: inout DaemonConfiguration.MotionSettings?) {
        guard objectOrNull(value, at: path, &target, allowed: "an object with a line") != nil else { return }
        guard let keys = members(value, at: path, keys: ["chip", "line", "activeLow", "debounce", "ignition"]) else { return }
        guard let lineValue = keys["line"] else {
            report(Self.join(path, "line"), "is missing (allowed: \(ConfigurationRanges.gpioLine.allowed))")
            return
        }
        guard let line = number(lineValue, at: Self.join(path, "line"), ConfigurationRanges.gpioLine, null: nil) else {
            return
        }
        var motion = DaemonConfiguration.MotionSettings(line: Int(line))
        if let value = keys["chip"], let text = string(value, at: Self.join(path, "chip"), .chip) { motion.chip = text }
        if let value = keys["activeLow"], let flag = flag(value, at: Self.join(path, "activeLow")) {
            motion.activeLow = flag
        }
        if let value = keys["debounce"],
            let seconds = number(value, at: Self.join(path, "debounce"), ConfigurationRanges.motionDebounce, null: nil)
        {
            motion.debounce = seconds
        }
        if let value = keys["ignition"], let flag = flag(value, at: Self.join(path, "ignition")) { motion.ignition = flag }
        target = motion
    }

    /// `{"device": …, "threshold": …, "sampleInterval": …, "debounce": …}`: only `device` is required.
    mutating func motionIIO(_ value: JSONValue, at path: String, _ target: inout DaemonConfiguration.IIOMotionSettings?) {
        guard objectOrNull(value, at: path, &target, allowed: "an object with a device") != nil else { return }
        guard let keys = members(value, at: path, keys: ["device", "threshold", "sampleInterval", "debounce"]) else {
            return
        }
        guard let deviceValue = keys["device"] else {
            report(Self.join(path, "device"), "is missing (allowed: an IIO device such as \"iio:device0\" or \"mpu6050\")")
            return
        }
        guard let device = string(deviceValue, at: Self.join(path, "device"), .name) else { return }
        var motion = DaemonConfiguration.IIOMotionSettings(device: device)
        if let value = keys["threshold"],
            let number = number(value, at: Self.join(path, "threshold"), ConfigurationRanges.accelerationThreshold, null: nil)
        {
            motion.threshold = number
        }
        if let value = keys["sampleInterval"],
            let seconds = number(value, at: Self.join(path, "sampleInterval"), ConfigurationRanges.sampleInterval, null: nil)
        {
            motion.sampleInterval = seconds
        }
        if let value = keys["debounce"],
            let seconds = number(value, at: Self.join(path, "debounce"), ConfigurationRanges.motionDebounce, null: nil)
        {
            motion.debounce = seconds
        }
        target = motion
    }

    /// A port number, or a service name as a string (`"gpsd"`); a number in a string is kept as a number.
    mutating func port(_ value: JSONValue, at path: String, _ target: inout String) {
        let allowed = "\(ConfigurationRanges.port.allowed), or a service name such as \"gpsd\""
        switch value {
        case .number(let number):
            if ConfigurationRanges.port.contains(number) {
                target = String(Int(number))
            } else {
                report(path, "is \(JSONWriter.numberText(number)), out of range (allowed: \(allowed))")
            }
        case .string(let text):
            if let number = Int(text) {
                if ConfigurationRanges.port.contains(Double(number)) {
                    target = String(number)
                } else {
                    report(path, "is '\(text)', out of range (allowed: \(allowed))")
                }
            } else if !text.isEmpty, text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) {
                target = text
            } else {
                report(path, "'\(text)' is not a port (allowed: \(allowed))")
            }
        default:
            report(path, "is \(value.typeName), not a number or a string (allowed: \(allowed))")
        }
    }

    /// Permission bits as octal digits in a string: JSON numbers are decimal, so 0660 cannot be a number.
    mutating func mode(_ value: JSONValue, at path: String, _ target: inout Int) {
        let allowed = "three or four octal digits in a string, such as \"0660\", at most \"0777\""
        guard case .string(let text) = value else {
            report(path, "is \(value.typeName), not a string (allowed: \(allowed))")
            return
        }
        let digits = text.count == 4 && text.hasPrefix("0") ? String(text.dropFirst()) : text
        guard digits.count == 3, let mode = Int(digits, radix: 8), digits.allSatisfy({ ("0"..."7").contains($0) })
        else {
            report(path, "'\(text)' is not a file mode (allowed: \(allowed))")
            return
        }
        target = mode
    }

    /// Values each fine alone that cannot work together.
    private mutating func checkCombinations(_ configuration: DaemonConfiguration) {
        let outputs = configuration.outputs
        if let socket = outputs.socket {
            let path = DaemonConfiguration.resolve(socket.path, under: configuration.runtimeDirectory)
            if path.utf8.count > ConfigurationRanges.socketPathBytes {
                report(
                    "outputs.socket.path",
                    "resolves to \(path), \(path.utf8.count) bytes: a Unix socket's path holds at most "
                        + "\(ConfigurationRanges.socketPathBytes)")
            }
        }
        if let jsonl = outputs.jsonl, let capture = outputs.capture,
            DaemonConfiguration.resolve(jsonl.path, under: configuration.stateDirectory)
                == DaemonConfiguration.resolve(capture.path, under: configuration.stateDirectory)
        {
            report("outputs.capture.path", "is the same file as outputs.jsonl.path (allowed: another file)")
        }
        if configuration.motion != nil, configuration.motionIIO != nil {
            report("motion.iio", "is set, and so is motion.gpio (allowed: one motion source, the other null)")
        }
        let upload = configuration.upload
        if configuration.store == nil, !upload.names.isEmpty {
            report(
                "store",
                "is off, but upload.\(upload.names.joined(separator: " and upload.")) needs it: uploads are sent "
                    + "from the store (allowed: a store, or no uploaders)")
        }
        if upload.maxBackoff < upload.initialBackoff {
            report(
                "upload.maxBackoff",
                "is \(JSONWriter.numberText(upload.maxBackoff)) s, less than upload.initialBackoff "
                    + "(\(JSONWriter.numberText(upload.initialBackoff)) s) (allowed: at least initialBackoff)")
        }
    }
}
