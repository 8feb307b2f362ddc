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

/// What reaches the runtime's thread from elsewhere: the application's calls and gpsd's answers to power
/// control's writes (gpsd's events are read on that thread, by the source).
enum RuntimeMessage: Sendable {
    case command(PolicyEvent)
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

    /// What a thread polls, with other descriptors, to wake when something is posted; -1 without a pipe.
    var wakeDescriptor: Int32 { wakeUp.descriptor }

    /// Empties the wake-up pipe after such a poll (what was posted stays in the inbox).
    func drainWakeUp() { wakeUp.drain() }
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

/// Where the runtime's events and its clock come from; used only on the runtime's thread. Live: gpsd, read
/// within `next`, and the monotonic clock. Replay: a capture's events with its `t` as a virtual clock,
/// with the receiver simulated (`SimulatedReceiver`).
protocol RuntimeSource: AnyObject {
    /// Now, on this source's clock.
    var now: Instant { get }
    /// Starts producing.
    func start(inbox: Inbox)
    /// Waits for what comes next: one of this source's events, the clock reaching `deadline` (a timer is
    /// due), or a message in `inbox`.
    func next(before deadline: Instant?, inbox: Inbox) -> SourceStep
    /// The policy asked for `regime`: a simulated receiver produces no fixes while it is down.
    func regimeChanged(to regime: ReceiverRegime, at now: Instant)
    /// Stops producing (live: the connection to gpsd is closed).
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
        // A timer due at the event's own instant fires first, as in `lodestar replay` (`SimulationRun`): a
        // wake due then brings the receiver up only from that instant, so a fix of the same instant waits for
        // its time to first fix like any other.
        if let deadline, deadline.seconds <= t {
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

/// gpsd, read on the runtime's own thread, on the monotonic clock: each turn of `next` reads until a report,
/// the next timer or a post to the inbox, so a report reaches the policy without waking a second thread (a
/// reader thread of its own cost a wake-up per report, measured in bench/daemon.sh). gpsd absent at the
/// start is a `receiverLost` like any later loss, and the source keeps trying. The receiver control's
/// commands (`ReceiverLink.commands`) are written between reads.
final class LiveSource: RuntimeSource {
    let host: String
    let port: String
    let device: String?
    private let receiverLink: ReceiverLink
    private let stopping = StopFlag()
    private let origin = monotonicSeconds()
    /// Runtime seconds per monotonic second: 1 live; more when a test plays an emulated receiver faster.
    private let clockRate: Double
    /// Gets every line gpsd sends and with `recordsReceiverBytes` the receiver's bytes.
    private let recorder: CaptureRecorder?
    private let recordsReceiverBytes: Bool
    private var reader: LiveReportReader?
    /// Events of one read not yet handed to the runtime (a loss can come with the epoch held before it).
    private var pending: [LiveEvent] = []
    private var pendingIndex = 0

    init(
        host: String, port: String, device: String?, receiverLink: ReceiverLink, clockRate: Double = 1,
        recorder: CaptureRecorder? = nil, recordsReceiverBytes: Bool = false
    ) {
        (self.host, self.port, self.device, self.receiverLink, self.clockRate, self.recorder, self.recordsReceiverBytes)
            = (host, port, device, receiverLink, clockRate, recorder, recordsReceiverBytes)
    }

    var now: Instant { Instant(seconds: (monotonicSeconds() - origin) * clockRate) }

    func start(inbox: Inbox) {
        // The control learns of the channel before any device: it may have nothing to do until one comes.
        receiverLink.passOnContext()
        // Satellite lists are not needed for locations: counts and DOPs are decoded without libgps. An epoch
        // ends after a quiet that shrinks with the clock rate (a receiver played fast has fast epochs).
        var lineObserver: (@Sendable (UnsafeBufferPointer<CChar>) -> Void)?
        if let recorder { lineObserver = { line in recorder.recordGPSDLine(line) } }
        // The raw watch connects again the moment gpsd's reader does, so its bytes resume with the reports.
        let rawReconnect: ReconnectSignal? = recorder != nil && recordsReceiverBytes ? ReconnectSignal() : nil
        var onConnected: (@Sendable () -> Void)?
        if let rawReconnect { onConnected = { rawReconnect.signal() } }
        let source = LiveReportSource(
            host: host, port: port, device: device, satelliteDetail: false, lineObserver: lineObserver,
            commands: receiverLink.commands,
            epochQuiet: EpochCollapser<Int, Int, Int>.defaultQuietInterval / clockRate,
            onConnected: onConnected)
        reader = LiveReportReader(source)
        if let recorder, recordsReceiverBytes {
            let stopping = stopping
            // A raw watch that cannot start leaves the capture without `rx` lines; gpsd's lines still come.
            _ = RawByteWatch.start(
                host: host, port: port, device: device, reconnectNow: rawReconnect, shouldStop: { stopping.isSet },
                onBytes: { recorder.recordReceived($0) }, onFinish: {})
        }
    }

    func next(before deadline: Instant?, inbox: Inbox) -> SourceStep {
        // A device gpsd announced since the last turn reaches the control before the runtime waits again.
        receiverLink.passOnContext()
        if pendingIndex == pending.count, let reader, inbox.isEmpty {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            let seconds = deadline.map { max(($0 - now) / clockRate, 0) } ?? .infinity
            let link = receiverLink
            reader.step(seconds: seconds, wakeDescriptor: inbox.wakeDescriptor) { event in
                link.note(event)
                pending.append(event)
            }
            inbox.drainWakeUp()
            // At least every 0.2 s (the longest step): the capture's fsync cadence needs no thread of its own.
            recorder?.syncIfDue()
        }
        guard pendingIndex < pending.count else { return .idle }
        let event = pending[pendingIndex]
        pendingIndex += 1
        return .event(event, at: now)
    }

    func regimeChanged(to regime: ReceiverRegime, at now: Instant) {}

    func stop() {
        stopping.set()
        reader?.close { _ in }
        reader = nil
    }
}
