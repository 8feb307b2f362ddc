import Capture
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
        // A raw log's only clock is the receiver's: its epochs' gaps, long ones shortened.
        var previousTime: Double?
        var t = 0.0
        let chunks = log.epochs.map { epoch -> (t: Double, bytes: ArraySlice<UInt8>) in
            if let time = epoch.receiverTime {
                if let previousTime { t += min(max(RawLogEpochs.gap(from: previousTime, to: time), 0), maximumGap) }
                previousTime = time
            }
            return (t, log.bytes[epoch.range])
        }
        return feed(chunks, to: terminal, shouldStop: shouldStop)
    }

    /// Feeds `chunks` into `terminal`, each when its `t` (seconds from the first) divided by `speed` has
    /// passed; stops early when `shouldStop` says so or the pty closes.
    public func feed(
        _ chunks: [(t: Double, bytes: ArraySlice<UInt8>)], to terminal: PseudoTerminal, shouldStop: () -> Bool
    ) -> Outcome {
        var outcome = Outcome(epochsWritten: 0, bytesWritten: 0, completed: false)
        let start = monotonicSeconds()
        let firstT = chunks.first?.t ?? 0
        for chunk in chunks {
            if shouldStop() { return outcome }
            if let speed, speed > 0 {
                let due = start + (chunk.t - firstT) / speed
                while monotonicSeconds() < due {
                    if shouldStop() { return outcome }
                    sleepSeconds(min(0.05, due - monotonicSeconds()))
                }
            }
            guard terminal.write(Array(chunk.bytes)) else { return outcome }
            outcome.epochsWritten += 1
            outcome.bytesWritten += chunk.bytes.count
        }
        outcome.completed = terminal.waitUntilRead()
        return outcome
    }
}
