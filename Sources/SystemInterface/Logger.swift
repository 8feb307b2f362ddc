#if canImport(Glibc)
    import Glibc
#endif

/// Where a long-running part of Lodestar says what happens: a label, a level threshold and metadata, handed to
/// a handler that writes the line. After swift-log's `Logger` (Sources/Logging/Logging.swift there): a value
/// passed to whoever logs, never a global, and a message below the threshold is never built.
public struct Logger: Sendable {
    /// swift-log's levels, in order. Each maps to a syslog priority, which journald files the line under.
    public enum Level: String, CaseIterable, Comparable, Sendable {
        case trace, debug, info, notice, warning, error, critical

        /// The sd-daemon(3) priority (`<7>` debug … `<2>` critical); trace has none lower than debug.
        public var syslogPriority: Int {
            switch self {
            case .trace, .debug: 7
            case .info: 6
            case .notice: 5
            case .warning: 4
            case .error: 3
            case .critical: 2
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }

        private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
    }

    /// One message, as the handler gets it.
    public struct Message: Sendable, Equatable {
        public var level: Level
        public var label: String
        public var text: String
        /// Facts a program reads (`mechanism=ubx`), in the order given; the text is for people.
        public var metadata: [Metadata]
    }

    public struct Metadata: Sendable, Equatable {
        public var key: String
        public var value: String

        public init(_ key: String, _ value: String) {
            self.key = key
            self.value = value
        }
    }

    public let label: String
    /// Messages below this are dropped before they are built.
    public var logLevel: Level
    /// Added to every message of this logger, before the message's own.
    public var metadata: [Metadata] = []
    private let handler: @Sendable (Message) -> Void

    public init(label: String, logLevel: Level = .info, handler: @escaping @Sendable (Message) -> Void) {
        self.label = label
        self.logLevel = logLevel
        self.handler = handler
    }

    /// A logger that writes nothing: for a caller that wants silence, said where it is made.
    public static func discarding(label: String) -> Logger { Logger(label: label) { _ in } }

    public func log(_ level: Level, _ text: @autoclosure () -> String, metadata: [Metadata] = []) {
        guard level >= logLevel else { return }
        handler(Message(level: level, label: label, text: text(), metadata: self.metadata + metadata))
    }

    public func trace(_ text: @autoclosure () -> String, metadata: [Metadata] = []) {
        log(.trace, text(), metadata: metadata)
    }
    public func debug(_ text: @autoclosure () -> String, metadata: [Metadata] = []) {
        log(.debug, text(), metadata: metadata)
    }
    public func info(_ text: @autoclosure () -> String, metadata: [Metadata] = []) {
        log(.info, text(), metadata: metadata)
    }
    public func notice(_ text: @autoclosure () -> String, metadata: [Metadata] = []) {
        log(.notice, text(), metadata: metadata)
    }
    public func warning(_ text: @autoclosure () -> String, metadata: [Metadata] = []) {
        log(.warning, text(), metadata: metadata)
    }
    public func error(_ text: @autoclosure () -> String, metadata: [Metadata] = []) {
        log(.error, text(), metadata: metadata)
    }
    public func critical(_ text: @autoclosure () -> String, metadata: [Metadata] = []) {
        log(.critical, text(), metadata: metadata)
    }
}

/// A message with its level, made where no logger is at hand (an output's failure, an uploader's thread) and
/// logged by whoever holds one.
public struct LogEntry: Sendable, Equatable {
    public var level: Logger.Level
    public var text: String

    public init(_ level: Logger.Level, _ text: String) {
        self.level = level
        self.text = text
    }
}

/// A message as one line of stderr: `label: text key=value …`. When stderr is journald's stream, the line
/// starts with the sd-daemon priority prefix (`<4>`), so `journalctl -p warning` shows warnings and worse.
public struct LogLineFormat: Sendable {
    public var priorityPrefix: Bool

    public init(priorityPrefix: Bool) { self.priorityPrefix = priorityPrefix }

    /// Prefixes when `JOURNAL_STREAM` names this process's stderr: systemd sets it to the stream's
    /// `device:inode`, and it is inherited by children whose stderr may be something else (sd_journal_stream_fd(3)
    /// and systemd.exec(5) say to compare).
    public static func forStandardError(environment: String? = environmentValue("JOURNAL_STREAM")) -> LogLineFormat {
        LogLineFormat(priorityPrefix: environment.map { journalStreamIs($0, descriptor: 2) } ?? false)
    }

    /// True when `value` (`DEVICE:INODE`, decimal) names the file open on `descriptor`.
    public static func journalStreamIs(_ value: String, descriptor: Int32) -> Bool {
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    public func line(_ message: Logger.Message) -> String {
        var line = priorityPrefix ? "<\(message.level.syslogPriority)>" : ""
        line += message.label.isEmpty ? message.text : message.label + ": " + message.text
        for item in message.metadata { line += " \(item.key)=\(item.value)" }
        return line
    }
}

/// The value of environment variable `name`, or nil.
public func environmentValue(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}
