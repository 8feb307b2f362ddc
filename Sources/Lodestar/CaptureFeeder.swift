import GPSD

/// Writes a raw receiver log into a pty as the receiver would have: epoch by epoch, paced by the receiver's
/// own clock divided by `speed`, or as fast as gpsd reads when `speed` is nil.
public struct CaptureFeeder: Sendable {
    public var speed: Double?
    /// Longer gaps in the log (a logger paused, a tunnel) are shortened to this many receiver seconds.
    public var maximumGap: Double

    public init(speed: Double? = nil, maximumGap: Double = 5) {
        self.speed = speed
        self.maximumGap = maximumGap
    }

    public struct Outcome: Sendable, Equatable {
        public var epochsWritten: Int
        public var bytesWritten: Int
        /// Every byte was written and gpsd has read it.
        public var completed: Bool
    }

    /// Feeds `log` into `terminal`; stops early when `shouldStop` says so or the pty closes.
    public func feed(_ log: RawLogEpochs, to terminal: PseudoTerminal, shouldStop: () -> Bool) -> Outcome {
        var outcome = Outcome(epochsWritten: 0, bytesWritten: 0, completed: false)
        var previousTime: Double?
        var due = monotonicSeconds()
        for epoch in log.epochs {
            if shouldStop() { return outcome }
            if let speed, speed > 0, let time = epoch.receiverTime {
                if let previousTime {
                    let gap = min(max(RawLogEpochs.gap(from: previousTime, to: time), 0), maximumGap)
                    due += gap / speed
                }
                previousTime = time
                while monotonicSeconds() < due {
                    if shouldStop() { return outcome }
                    sleepSeconds(min(0.05, due - monotonicSeconds()))
                }
            }
            guard terminal.write(Array(log.bytes[epoch.range])) else { return outcome }
            outcome.epochsWritten += 1
            outcome.bytesWritten += epoch.range.count
        }
        outcome.completed = terminal.waitUntilRead()
        return outcome
    }
}
