import Lodestar
import Synchronization
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// Where a command writes text. Each call is one complete piece (a line), written at once so output can be
/// piped while it arrives.
public protocol TextSink: Sendable {
    /// Returns false when the text could not be written.
    func write(_ text: String) -> WriteOutcome
}

public enum WriteOutcome: Sendable, Equatable {
    case written
    /// The reader went away (EPIPE): `lodestar watch | head` ending is not an error.
    case readerGone
    case failed(errno: Int32)
}

/// An unbuffered file descriptor: one `write(2)` per line, so nothing waits in a buffer when piped.
public struct FileDescriptorSink: TextSink {
    public let descriptor: Int32

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    public static let standardOutput = FileDescriptorSink(descriptor: 1)
    public static let standardError = FileDescriptorSink(descriptor: 2)

    public func write(_ text: String) -> WriteOutcome {
        var text = text
        return text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                guard let base = bytes.baseAddress else { return .written }
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno == EPIPE ? .readerGone : .failed(errno: errno)
                }
                offset += written
            }
            return .written
        }
    }
}

/// Collects text in memory, for running commands in-process in tests.
public final class MemorySink: TextSink {
    private let storage = Mutex<String>("")

    public init() {}

    public func write(_ text: String) -> WriteOutcome {
        storage.withLock { $0 += text }
        return .written
    }

    public var text: String { storage.withLock { $0 } }
    public var lines: [String] { text.split(whereSeparator: \.isNewline).map(String.init) }
}

/// What a command runs against: its output, its error output, and a way to be told to stop (Ctrl-C).
public struct CommandContext: Sendable {
    public var standardOutput: any TextSink
    public var standardError: any TextSink
    public var shouldStop: @Sendable () -> Bool

    public init(
        standardOutput: any TextSink, standardError: any TextSink, shouldStop: @escaping @Sendable () -> Bool
    ) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.shouldStop = shouldStop
    }

    func say(_ text: String) {
        _ = standardError.write(text + "\n")
    }

    /// The code of a command whose result a stop cut short: 143 after SIGTERM, else 130 (SIGINT, or a test's
    /// own stop).
    var stopCode: ExitCode { TerminationSignals.signalNumber == SIGTERM ? .terminated : .interrupted }

    /// `SIGTERM`, `SIGINT`: what asked to stop, for messages.
    var stopName: String { TerminationSignals.signalNumber == SIGTERM ? "SIGTERM" : "SIGINT" }

    /// A file waited on (a FIFO, a device) until SIGINT/SIGTERM ends with the documented stop code, not as
    /// unreadable: says so and gives the code; nil when no stop came.
    func stoppedReading(_ file: String, command: String) -> ExitCode? {
        guard shouldStop() else { return nil }
        say("lodestar \(command): stopped by \(stopName) while reading \(file)")
        return stopCode
    }

    /// Writes one piece of a command's output to standard output. Every command's output goes through here
    /// (or `LocationEmitter`, which says the same), so a failed write is never silent: `NAME: cannot write
    /// output: REASON` on stderr, and false (the caller exits 74). The reader going away (`| head`) is not a
    /// failure.
    func writeOutput(_ text: String, name: String) -> Bool {
        switch standardOutput.write(text) {
        case .written, .readerGone:
            return true
        case .failed(let code):
            say("\(name): cannot write output: \(Self.reason(code))")
            return false
        }
    }

    /// The system's words for `code`.
    static func reason(_ code: Int32) -> String { Errno(rawValue: code).description }
}

/// SIGINT and SIGTERM end commands cleanly: the handler only sets a flag the read loops look at
/// (`StopRequest`, which a read of a FIFO or device in any module looks at too).
public enum TerminationSignals {

    public static func install() {
        StopRequest.prepare()
        signal(SIGPIPE, SIG_IGN)
        // A file-size limit (ulimit -f) then fails the write with EFBIG, which record reports, instead of
        // killing the process mid-line.
        signal(SIGXFSZ, SIG_IGN)
        for signalNumber in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                StopRequest.record(number)
            }
            sigemptyset(&action.sa_mask)
            // No SA_RESTART: a blocked select() returns EINTR and the loop sees the flag at once.
            action.sa_flags = 0
            sigaction(signalNumber, &action, nil)
        }
    }

    public static var requested: Bool { StopRequest.signalNumber != 0 }

    /// The signal that asked to stop, 0 if none did.
    public static var signalNumber: Int32 { StopRequest.signalNumber }
}

/// SIGHUP asks `lodestar run` to read its config again. Installed by `run` alone: for every other command
/// SIGHUP keeps its default (the terminal went away: end).
public enum HangupSignal {
    private static let received = Atomic<Int32>(0)

    public static func install() {
        var action = sigaction()
        StopRequest.prepare()
        action.__sigaction_handler.sa_handler = { _ in
            HangupSignal.received.add(1, ordering: .relaxed)
            StopRequest.wakeUp.signal()
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGHUP, &action, nil)
    }

    /// Whether a SIGHUP came since the last call.
    public static func take() -> Bool {
        received.exchange(0, ordering: .relaxed) != 0
    }
}

