import SystemInterface
import GPSModel

/// One output as the service drives it. A failing output is not tried on every record: that wrote a
/// "cannot write" and a "writing again" line for every location when a GPX folder went read-only (the other
/// records, which a GPX file ignores, "succeeded" in between). After a failure the output rests, 5 s at first
/// and twice as long after each failed retry up to 5 min; the locations it misses meanwhile are counted as
/// lost, and only a location written again ends the failure. The journal hears the failure once and the
/// recovery once, with the count.
public final class OutputGuard {
    public let output: any TrackOutput
    /// Locations this output failed to take or skipped while resting, since the service started.
    public private(set) var lost = 0
    /// The failure while it lasts.
    public private(set) var failure: String?
    private var failedAt = 0.0
    private var lostThisFailure = 0
    private var rest = 0.0
    private var retryAt = 0.0

    static let firstRest = 5.0
    static let longestRest = 300.0

    public init(_ output: any TrackOutput) { self.output = output }

    /// The output's descriptors to watch (nothing while it has failed: its retry is the tick's).
    public var pollDescriptors: [Int32] { failure == nil ? output.pollDescriptors : [] }

    public var name: String { output.name }
    public var status: OutputStatus { OutputStatus(name: output.name, failure: failure, lost: lost) }

    /// Hands `record` on unless the output is resting; `t` is the service's monotonic seconds. Returns the
    /// lines for the journal.
    public func write(_ record: TrackRecord, now: UTCTime, t: Double) -> [LogEntry] {
        let isLocation = if case .location = record { true } else { false }
        if failure != nil, t < retryAt {
            if isLocation { countLost() }
            return []
        }
        var lines: [LogEntry] = []
        do throws(OutputFailure) {
            try output.write(record, now: now)
            if isLocation, let failure {
                lines.append(
                    LogEntry(.notice, "\(name): writing again after \(StatusText.duration(t - failedAt)); "
                        + "\(lostThisFailure) location\(lostThisFailure == 1 ? "" : "s") lost while it failed "
                        + "(\(failure))"))
                self.failure = nil
                rest = 0
                lostThisFailure = 0
            }
        } catch {
            if isLocation { countLost() }
            lines += failed(error, t: t)
        }
        return lines + notices()
    }

    /// The output's tick (fsync cadence, midnight, socket clients), unless it is resting.
    public func tick(now: UTCTime, t: Double) -> [LogEntry] {
        unlessResting(t: t) { () throws(OutputFailure) in try output.tick(now: now) }
    }

    /// The output's sync, unless it is resting.
    public func sync(now: UTCTime, t: Double) -> [LogEntry] {
        unlessResting(t: t) { () throws(OutputFailure) in try output.sync(now: now) }
    }

    private func unlessResting(t: Double, _ body: () throws(OutputFailure) -> Void) -> [LogEntry] {
        if failure != nil, t < retryAt { return [] }
        do throws(OutputFailure) {
            try body()
        } catch {
            return failed(error, t: t) + notices()
        }
        return notices()
    }

    public func close() { output.close() }

    /// Closes the output; a line with what it lost when it was still failing (it never wrote again, so the
    /// journal has not had the count yet).
    public func finish(t: Double) -> [LogEntry] {
        output.close()
        guard let failure else { return [] }
        return [
            LogEntry(
                .error,
                "\(name): closed while failing for \(StatusText.duration(t - failedAt)); \(lostThisFailure) "
                    + "location\(lostThisFailure == 1 ? "" : "s") lost (\(failure))")
        ]
    }

    /// The next record is tried whatever the rest (a reload: the administrator may have mended the folder).
    public func retryNow() { retryAt = 0 }

    private func countLost() {
        lost += 1
        lostThisFailure += 1
    }

    private func failed(_ error: OutputFailure, t: Double) -> [LogEntry] {
        rest = min(max(Self.firstRest, rest * 2), Self.longestRest)
        retryAt = t + rest
        guard failure == nil else {
            failure = error.description
            return []
        }
        failure = error.description
        failedAt = t
        return [
            LogEntry(
                .error,
                "\(name): cannot write: \(error); trying again every \(StatusText.duration(Self.firstRest)) to "
                    + "\(StatusText.duration(Self.longestRest)), counting the locations it misses")
        ]
    }

    /// An output's own notices (a slow socket client dropped, a group missing) are worth a warning.
    private func notices() -> [LogEntry] { output.takeNotices().map { LogEntry(.warning, "\(name): \($0)") } }
}
