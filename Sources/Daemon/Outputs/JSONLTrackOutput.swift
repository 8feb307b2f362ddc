import GPSModel

/// The jsonl track file: every record as one JSON object per line (locations in docs/cli.md's schema, and the
/// regime, event and power lines with `t` and `timestamp`), in a `RotatingFile`.
public final class JSONLTrackOutput: TrackOutput {
    public let file: RotatingFile
    public var name: String { "jsonl \(file.path)" }

    /// `path` is used as given (the caller resolves it against the state directory).
    public init(path: String, settings: DaemonConfiguration.JSONLOutput) {
        file = RotatingFile(path: path, rotation: settings.rotation, fsyncInterval: settings.fsyncInterval)
    }

    public func write(_ record: TrackRecord, now: UTCTime) throws(OutputFailure) {
        try file.append(bytes: TrackRecordLine.lineBytes(for: record, style: .jsonl), now: now)
    }

    public func tick(now: UTCTime) throws(OutputFailure) {
        try file.tick(now: now)
    }

    public func sync(now: UTCTime) throws(OutputFailure) {
        try file.syncWritten(now: now)
    }

    public func close() {
        file.close()
    }
}
