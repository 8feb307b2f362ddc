import GPSModel
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// Records on standard output: the `watch` text line per location and `# ` lines for the rest, or jsonl. The
/// bytes go through `sink`, standard output unless a test gives its own.
public final class StdoutTrackOutput: TrackOutput {
    public typealias Sink = (String) throws(OutputFailure) -> Void

    public let format: DaemonConfiguration.StdoutOutput.Format
    private let sink: Sink
    public var name: String { "stdout \(format.rawValue)" }

    public init(settings: DaemonConfiguration.StdoutOutput, sink: @escaping Sink = StdoutTrackOutput.standardOutput) {
        format = settings.format
        self.sink = sink
    }

    public func write(_ record: TrackRecord, now: UTCTime) throws(OutputFailure) {
        try sink(TrackRecordLine.line(for: record, style: format == .text ? .text : .jsonl))
    }

    public func tick(now: UTCTime) throws(OutputFailure) {}

    public func close() {}

    /// Writes the whole text to descriptor 1.
    public static func standardOutput(_ text: String) throws(OutputFailure) {
        var code: Int32 = 0
        let written = Array(text.utf8).withUnsafeBytes { bytes in
            let done = writeAll(1, bytes)
            if !done { code = errno }
            return done
        }
        guard written else { throw OutputFailure(path: "stdout", reason: errnoText(code)) }
    }
}
