import SystemInterface
import Capture
import Synchronization
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
        let pacer = Pacer(speed: speed, origin: chunks.first?.t ?? 0)
        for chunk in chunks {
            if shouldStop() { return outcome }
            guard pacer.wait(until: chunk.t, shouldStop: shouldStop) else { return outcome }
            guard terminal.write(Array(chunk.bytes)) else { return outcome }
            outcome.epochsWritten += 1
            outcome.bytesWritten += chunk.bytes.count
        }
        outcome.completed = terminal.waitUntilRead()
        return outcome
    }
}

/// A feed on its own thread, as the demo and `replay --through-gpsd` run one while they read gpsd back:
/// started once the watch is in effect, stoppable early, and done `settle` seconds after its last byte
/// (gpsd reports the last epoch once it sees no more input).
public final class BackgroundFeed: Sendable {
    private let started = Atomic<Bool>(false)
    private let done = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    public let settle: Double

    public init(settle: Double = 1) {
        self.settle = settle
    }

    /// Runs `body` once, on a new thread; `body` gets a check that says when to stop early.
    public func start(_ body: @escaping @Sendable (_ shouldStop: () -> Bool) -> Void) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let launched = DetachedThread.start { [self] in
            body { stopRequested.load(ordering: .relaxed) }
            sleepSeconds(settle)
            done.store(true, ordering: .releasing)
        }
        if !launched { done.store(true, ordering: .releasing) }
    }

    /// Fed and settled (or it could not start).
    public var isDone: Bool { done.load(ordering: .acquiring) }

    /// Asks the feed to stop early.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
    }

    /// Waits for a started feed to be done (at once when it never started).
    public func waitUntilDone() {
        while started.load(ordering: .acquiring) && !isDone { sleepSeconds(0.02) }
    }
}
