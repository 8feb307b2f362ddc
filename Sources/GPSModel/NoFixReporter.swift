/// Where a receiver that should be navigating stands while it has no usable fix: what the sky report said and
/// how long it has been. Carried by the status lines `watch` prints and by `LocationManager`'s `.noFix` update.
public struct NoFixStatus: Sendable, Equatable {
    /// Satellites the last sky report of this no-fix period saw and used; nil when none came.
    public var satellitesSeen: Int?
    public var satellitesUsed: Int?
    /// Seconds since the last usable fix; nil when there was none since the tracker started.
    public var secondsSinceLastFix: Double?
    /// The receiver's time of that fix, when it had one.
    public var lastFixTime: UTCTime?
    /// Seconds since the receiver was expected to navigate: the start, or a wake from standby or off.
    public var secondsNavigating: Double
    /// Seconds since gpsd last reported anything from the receiver (a TPV or a SKY); nil when it never did.
    public var secondsSinceData: Double?
    /// The line a person reads: `no fix for 1 min 30 s (since 2026-11-30T21:03:11Z): 9 satellites seen, 0 used`.
    public var sentence: String
}

/// What `NoFixReporter` has to say.
public enum NoFixNotice: Sendable, Equatable {
    /// Still no fix: said after `interval` without one, and every `interval` after that.
    case noFix(NoFixStatus)
    /// A fix came back after at least one `noFix` line (`fix again after 3 min 10 s`).
    case fixAgain(afterSeconds: Double, sentence: String)

    public var sentence: String {
        switch self {
        case .noFix(let status): status.sentence
        case .fixAgain(_, let sentence): sentence
        }
    }
}

/// Notices that a receiver has had no usable fix for a while, from its reports and a monotonic clock the
/// caller gives (so it is tested without waiting). Pure: the caller feeds fixes and sky reports and asks, at
/// `nextDeadline` or whenever it likes, whether a line is due.
///
/// A receiver put in standby or off on purpose is not expected to navigate: `suspend` stops the lines, and
/// `resume` after a wake grants the receiver its time to first fix before the no-fix clock starts.
public struct NoFixReporter: Sendable {
    /// What `watch` and the daemon use unless told otherwise.
    public static let defaultInterval = 30.0
    /// Seconds without a fix before the first line, and between lines.
    public let interval: Double
    /// When the receiver was last expected to navigate (the start or the end of a wake's grace); nil while
    /// suspended.
    private var expectedSince: Double?
    private var navigatingSince: Double
    private var lastFixAt: Double?
    private var lastFixTime: UTCTime?
    private var lastDataAt: Double?
    /// When gpsd last reported a position without a time (an NMEA receiver sending GGA but no RMC or ZDA).
    private var lastUntimedAt: Double?
    private var sky: (seen: Int, used: Int)?
    private var lastLineAt: Double?

    /// Starts expecting a fix at `now` (monotonic seconds), after `grace` seconds (a cold start's time to
    /// first fix, say).
    public init(interval: Double = NoFixReporter.defaultInterval, now: Double, grace: Double = 0) {
        self.interval = interval > 0 && interval.isFinite ? interval : Self.defaultInterval
        expectedSince = now + max(grace, 0)
        navigatingSince = now
    }

    /// When a line is next due (monotonic seconds); nil while suspended.
    public var nextDeadline: Double? {
        guard let expectedSince else { return nil }
        if let lastLineAt { return lastLineAt + interval }
        return max(expectedSince, lastFixAt ?? expectedSince) + interval
    }

    /// A fix from gpsd (any mode): one with a position and a time ends the no-fix period, and says so when a
    /// line had said there was none. A position without a time is no location (`Location(fix)`), and the
    /// line names it.
    public mutating func observe(_ fix: Fix, at now: Double) -> NoFixNotice? {
        lastDataAt = now
        guard fix.hasPosition else { return nil }
        guard fix.time != nil else {
            lastUntimedAt = now
            return nil
        }
        let notice: NoFixNotice?
        if lastLineAt != nil {
            let since = max(lastFixAt ?? navigatingSince, navigatingSince)
            let seconds = now - since
            notice = .fixAgain(afterSeconds: seconds, sentence: "fix again after \(Self.duration(seconds))")
        } else {
            notice = nil
        }
        lastFixAt = now
        lastFixTime = fix.time ?? lastFixTime
        lastLineAt = nil
        sky = nil
        return notice
    }

    /// A sky report: the satellites the next line counts.
    public mutating func observe(_ sky: SkyView, at now: Double) {
        lastDataAt = now
        self.sky = (sky.satellitesVisible, sky.satellitesUsed)
    }

    /// The receiver was put in standby or off on purpose: no lines until `resume`.
    public mutating func suspend() {
        expectedSince = nil
        lastLineAt = nil
    }

    /// The receiver navigates again from `now`, and needs `grace` seconds (its time to first fix) before a
    /// missing fix means anything. Does nothing when it was not suspended.
    public mutating func resume(at now: Double, grace: Double) {
        guard expectedSince == nil else { return }
        expectedSince = now + max(grace, 0)
        navigatingSince = now
        sky = nil
    }

    /// The line due at `now`, if one is.
    public mutating func check(at now: Double) -> NoFixNotice? {
        guard let deadline = nextDeadline, now >= deadline else { return nil }
        lastLineAt = now
        return .noFix(status(at: now))
    }

    private func status(at now: Double) -> NoFixStatus {
        let sinceFix = lastFixAt.map { now - $0 }
        // A fix from before a wake is history: the period is counted from the wake, the old fix named.
        let fixBeforeWake = lastFixAt.map { $0 < navigatingSince } ?? false
        var head: String
        switch (sinceFix, fixBeforeWake) {
        case (let seconds?, false):
            head = "no fix for \(Self.duration(seconds))"
            if let lastFixTime { head += " (since \(Self.wholeSeconds(lastFixTime)))" }
        case (let seconds?, true):
            head = "no fix \(Self.duration(now - navigatingSince)) after waking (last fix \(Self.duration(seconds)) ago"
            head += lastFixTime.map { ", at \(Self.wholeSeconds($0)))" } ?? ")"
        case (nil, _):
            head = "no fix since start \(Self.duration(now - navigatingSince)) ago"
        }
        let sinceData = lastDataAt.map { now - $0 }
        let body: String
        if let untimed = lastUntimedAt, now - untimed < interval {
            body = "gpsd reports positions without a time (\(Fix.untimedPositionsCause))"
        } else if let sinceData, sinceData < interval {
            if let sky {
                body = sky.seen == 0 ? "no satellites seen (antenna?)" : "\(sky.seen) satellites seen, \(sky.used) used"
            } else {
                body = "no satellite report"
            }
        } else if let sinceData {
            body = "no data from the receiver for \(Self.duration(sinceData))"
        } else {
            body = "gpsd reports no data from the receiver"
        }
        return NoFixStatus(
            satellitesSeen: sky?.seen, satellitesUsed: sky?.used, secondsSinceLastFix: sinceFix,
            lastFixTime: lastFixTime, secondsNavigating: now - navigatingSince, secondsSinceData: sinceData,
            sentence: head + ": " + body)
    }

    /// `45 s`, `1 min 30 s`, `2 min`, `1 h 5 min`, `3 d 2 h`: as precise as a person reads it.
    public static func duration(_ seconds: Double) -> String {
        let total = Int(max(seconds, 0).rounded())
        let (days, hours, minutes, rest) = (total / 86_400, total % 86_400 / 3600, total % 3600 / 60, total % 60)
        func pair(_ big: Int, _ bigUnit: String, _ small: Int, _ smallUnit: String) -> String {
            small == 0 ? "\(big) \(bigUnit)" : "\(big) \(bigUnit) \(small) \(smallUnit)"
        }
        if days > 0 { return pair(days, "d", hours, "h") }
        if hours > 0 { return pair(hours, "h", minutes, "min") }
        if minutes > 0 { return pair(minutes, "min", rest, "s") }
        return "\(rest) s"
    }

    /// `2026-11-30T21:03:11Z`: a status line needs no milliseconds.
    static func wholeSeconds(_ time: UTCTime) -> String {
        let text = UTCTime(seconds: time.seconds).iso8601
        return text.hasSuffix(".000Z") ? String(text.dropLast(5)) + "Z" : text
    }
}
