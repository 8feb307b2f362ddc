import Simulation
import SystemInterface
import Capture
import GPSD
import GPSModel
import Policy
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What reaches the runtime's thread from elsewhere: the application's calls and, live, gpsd's events.
enum RuntimeMessage: Sendable {
    case command(PolicyEvent)
    case event(LiveEvent)
    /// gpsd's answer to a write receiver power control made.
    case powerReply(GPSDCommandOutcome)
}

/// The runtime's mailbox: any thread posts, the runtime's thread takes everything at once and waits for
/// more with a timeout (the next timer). The wake-up is a byte in a pipe, so the wait is a `poll` on the
/// monotonic clock and a post never blocks.
final class Inbox: Sendable {
    private let messages = Mutex<[RuntimeMessage]>([])
    private let wakeUp = WakeUpPipe()

    func post(_ message: RuntimeMessage) {
        messages.withLock { $0.append(message) }
        wakeUp.signal()
    }

    /// Everything posted so far, oldest first.
    func take() -> [RuntimeMessage] {
        messages.withLock { messages in
            let taken = messages
            messages.removeAll()
            return taken
        }
    }

    var isEmpty: Bool { messages.withLock { $0.isEmpty } }

    /// Waits until something is posted or `seconds` pass (nil: no limit). May return early.
    func wait(seconds: Double?) {
        guard isEmpty else { return }
        wakeUp.wait(seconds: seconds)
    }
}

/// What a source says happened, in `RuntimeSource.next`.
enum SourceStep {
    /// An event at its instant on the source's clock.
    case event(LiveEvent, at: Instant)
    /// The clock moved (to a timer's deadline, or while waiting) or a message arrived: look again.
    case idle
    /// Nothing more will come (the capture's end).
    case ended(at: Instant)
}

/// Where the runtime's events and its clock come from; used only on the runtime's thread. Live: gpsd on a
/// thread of its own, the monotonic clock. Replay: a capture's events with its `t` as a virtual clock,
/// with the receiver simulated (`SimulatedReceiver`).
protocol RuntimeSource: AnyObject {
    /// Now, on this source's clock.
    var now: Instant { get }
    /// Starts producing. A source that reads on another thread posts its events to `inbox`.
    func start(inbox: Inbox)
    /// Waits for what comes next: one of this source's events, the clock reaching `deadline` (a timer is
    /// due), or a message in `inbox`.
    func next(before deadline: Instant?, inbox: Inbox) -> SourceStep
    /// The policy asked for `regime`: a simulated receiver produces no fixes while it is down.
    func regimeChanged(to regime: ReceiverRegime, at now: Instant)
    /// Stops producing (live: the reader thread ends and closes its connection).
    func stop()
}

/// A capture replayed with its `t` as the clock: the same decoder and epoch collapsing as live
/// (`CaptureReplayer`). Timers due before the next event fire first, so the policy sees exactly what it
/// would have seen live, and two replays give the same updates. The receiver is simulated as in
/// `lodestar replay --profile` (`SimulatedReceiver`): while the policy has it down its fixes do not exist,
/// and after a wake the first comes only after the model's time to first fix.
final class ReplaySource: RuntimeSource {
    private let events: [(t: Double, event: LiveEvent)]
    private var index = 0
    private let speed: Double?
    private var clock: Double
    private let origin: Double
    /// Made when the replay starts.
    private var pacer: Pacer?
    private var receiver: SimulatedReceiver

    init(_ contents: CaptureContents, speed: Double?, receiver model: ReceiverModel) {
        var events: [(t: Double, event: LiveEvent)] = []
        var last = contents.lines.first?.t ?? 0
        CaptureReplayer(contents).run(onEvent: { t, event in
            // The replayer's times never go back; clamp anyway so the clock is monotonic whatever it says.
            last = max(last, t)
            events.append((last, event))
        })
        self.events = events
        self.speed = speed
        origin = contents.lines.first?.t ?? 0
        clock = origin
        receiver = SimulatedReceiver(model: model, start: origin)
    }

    var now: Instant { Instant(seconds: clock) }

    func start(inbox: Inbox) {
        pacer = Pacer(speed: speed, origin: origin)
    }

    func next(before deadline: Instant?, inbox: Inbox) -> SourceStep {
        // Fixes of a receiver that is down do not exist; only up to a timer's deadline, which may wake it.
        while index < events.count, !receiver.producesFix(at: events[index].t), case .fix = events[index].event,
            deadline.map({ events[index].t < $0.seconds }) ?? true
        {
            clock = max(clock, events[index].t)
            index += 1
        }
        // The capture's end is the end of time: timers due later never fire (a duty cycle would go on for
        // ever), and the runtime shuts the policy down at the last event's instant.
        guard index < events.count else { return .ended(at: now) }
        let (t, event) = events[index]
        if let deadline, deadline.seconds < t {
            guard waitUntil(deadline.seconds, inbox: inbox) else { return .idle }
            clock = max(clock, deadline.seconds)
            return .idle
        }
        guard waitUntil(t, inbox: inbox) else { return .idle }
        index += 1
        clock = max(clock, t)
        return .event(event, at: now)
    }

    /// Paces a replay with a speed: true when virtual time `t` is due on the wall clock, false when a
    /// message came first (the clock then stands where the wall clock says).
    private func waitUntil(_ t: Double, inbox: Inbox) -> Bool {
        guard let pacer else { return true }
        let remaining = pacer.secondsUntil(t)
        if remaining <= 0 { return true }
        inbox.wait(seconds: remaining)
        let reached = pacer.reached
        if reached >= t { return true }
        clock = max(clock, reached)
        return false
    }

    func regimeChanged(to regime: ReceiverRegime, at now: Instant) {
        _ = receiver.setRegime(regime, at: now.seconds)
    }

    func stop() {}
}

/// gpsd, read on a dedicated thread (`DetachedThread`: libgps blocks in `select`, which must not hold a
/// thread of Swift's cooperative pool), on the monotonic clock. gpsd absent at the start is a
/// `receiverLost` like any later loss, and the source keeps trying. The reader thread also writes the
/// receiver control's commands (`ReceiverLink.commands`) and notes the device for it.
final class LiveSource: RuntimeSource {
    let host: String
    let port: String
    let device: String?
    private let receiverLink: ReceiverLink
    private let stopping = StopFlag()
    private let origin = monotonicSeconds()
    /// Runtime seconds per monotonic second: 1 live; more when a test plays an emulated receiver faster.
    private let clockRate: Double
    /// Gets every line gpsd sends, on the reader thread, and with `recordsReceiverBytes` the receiver's bytes.
    private let recorder: CaptureRecorder?
    private let recordsReceiverBytes: Bool

    init(
        host: String, port: String, device: String?, receiverLink: ReceiverLink, clockRate: Double = 1,
        recorder: CaptureRecorder? = nil, recordsReceiverBytes: Bool = false
    ) {
        self.host = host
        self.port = port
        self.device = device
        self.receiverLink = receiverLink
        self.clockRate = clockRate
        self.recorder = recorder
        self.recordsReceiverBytes = recordsReceiverBytes
    }

    var now: Instant { Instant(seconds: (monotonicSeconds() - origin) * clockRate) }

    func start(inbox: Inbox) {
        // The control learns of the channel before any device: it may have nothing to do until one comes.
        receiverLink.passOnContext()
        let (host, port, device, stopping, link, rate) = (host, port, device, stopping, receiverLink, clockRate)
        let recorder = recorder
        let started = DetachedThread.start {
            Self.read(
                host: host, port: port, device: device, stopping: stopping, link: link, inbox: inbox, clockRate: rate,
                recorder: recorder)
        }
        if !started {
            inbox.post(.event(.receiverLost(reason: "cannot start a thread to read gpsd at \(host):\(port)")))
        }
        if let recorder, recordsReceiverBytes {
            // A raw watch that cannot start leaves the capture without `rx` lines; gpsd's lines still come.
            _ = RawByteWatch.start(
                host: host, port: port, device: device, shouldStop: { stopping.isSet },
                onBytes: { recorder.recordReceived($0) }, onFinish: {})
        }
    }

    private static func read(
        host: String, port: String, device: String?, stopping: StopFlag, link: ReceiverLink, inbox: Inbox,
        clockRate: Double, recorder: CaptureRecorder?
    ) {
        // Satellite lists are not needed for locations: counts and DOPs are decoded without libgps. An epoch
        // ends after a quiet that shrinks with the clock rate (a receiver played fast has fast epochs).
        var lineObserver: (@Sendable (UnsafeBufferPointer<CChar>) -> Void)?
        if let recorder { lineObserver = { line in recorder.recordGPSDLine(line) } }
        let source = LiveReportSource(
            host: host, port: port, device: device, satelliteDetail: false, lineObserver: lineObserver,
            commands: link.commands,
            epochQuiet: EpochCollapser<Int, Int, Int>.defaultQuietInterval / clockRate)
        var failures = 0
        var announced = false
        while !stopping.isSet {
            do throws(GPSDError) {
                try source.run(
                    shouldStop: {
                        // Checked at least every 0.2 s: the capture's fsync cadence needs no thread of its own.
                        recorder?.syncIfDue()
                        return stopping.isSet
                    }
                ) { event in
                    link.note(event)
                    inbox.post(.event(event))
                }
                return
            } catch {
                if !announced {
                    announced = true
                    inbox.post(.event(.receiverLost(reason: "cannot reach gpsd at \(host):\(port): \(error)")))
                }
                var remaining = source.backoff.delay(afterFailures: failures)
                failures += 1
                while remaining > 0, !stopping.isSet {
                    sleepSeconds(min(remaining, 0.1))
                    remaining -= 0.1
                }
            }
        }
    }

    func next(before deadline: Instant?, inbox: Inbox) -> SourceStep {
        // A device gpsd announced since the last turn reaches the control before the runtime waits again.
        receiverLink.passOnContext()
        inbox.wait(seconds: deadline.map { ($0 - now) / clockRate })
        return .idle
    }

    func regimeChanged(to regime: ReceiverRegime, at now: Instant) {}

    func stop() { stopping.set() }
}
