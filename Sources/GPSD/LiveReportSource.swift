import SystemInterface
import GPSModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What the live source tells its consumer.
public enum LiveEvent: Sendable, Equatable {
    /// Connected and watching (after gpsd echoed the `?WATCH`): the first time only.
    case watching(host: String, port: String, version: GPSDVersion?)
    /// One fix per epoch (see `EpochCollapser`).
    case fix(Fix)
    /// Any other report (SKY, GST, VERSION, ERROR, …).
    case report(Report)
    case deviceActivated(DeviceInfo)
    case deviceClosed(path: String)
    /// The watched device closed (unplugged, or removed from gpsd): gpsd is still there. The source keeps
    /// watching.
    case receiverLost(reason: String)
    /// gpsd itself went away (its connection closed or failed), could not be reached, or what answered is not
    /// gpsd; `reason` names host:port and says which. The source keeps trying.
    case gpsdLost(reason: String)
    /// Watching again after `receiverLost` or `gpsdLost`.
    case receiverBack
}

/// How long to wait between reconnection attempts: doubling from `initial`, never longer than `maximum`.
public struct ReconnectBackoff: Sendable, Equatable {
    public var initial: Double
    public var maximum: Double

    /// Short enough that fixes after a gpsd restart are not lost for long, long enough that a Pi Zero with
    /// gpsd gone for hours spends nothing noticeable on attempts.
    public static let standard = ReconnectBackoff(initial: 0.1, maximum: 2)

    public init(initial: Double, maximum: Double) {
        self.initial = initial
        self.maximum = maximum
    }

    public func delay(afterFailures failures: Int) -> Double {
        guard failures > 0 else { return initial }
        var delay = initial
        for _ in 0..<min(failures, 62) where delay < maximum { delay *= 2 }
        return min(delay, maximum)
    }
}

/// Reads gpsd on the caller's thread (`run`, `LiveReportReader`) or its own (`events`) and turns its stream into `LiveEvent`s:
/// reconnects when gpsd goes away, notices devices closing and appearing, and passes on one fix per epoch
/// (the session collapses each epoch's TPVs).
public final class LiveReportSource: Sendable {
    public let host: String
    public let port: String
    public let device: String?
    public let backoff: ReconnectBackoff
    /// Whether SKY reports list each satellite (see `GPSDSession.satelliteDetail`).
    public let satelliteDetail: Bool
    /// Sees every line gpsd sends, verbatim, before it is decoded (see `GPSDSession.lineObserver`).
    public let lineObserver: (@Sendable (UnsafeBufferPointer<CChar>) -> Void)?
    /// Commands other threads send through this source's connection (receiver power frames); the reader
    /// writes them between reads. Closed when `run` returns.
    public let commands: GPSDCommandChannel?
    /// See `GPSDSession.init(host:port:epochQuiet:)`.
    public let epochQuiet: Double
    /// Called on the reading thread each time a connection to gpsd is open and watching: a second watch
    /// beside this one (`RawByteWatch`) reconnects then, so its stream resumes with this one's reports.
    public let onConnected: (@Sendable () -> Void)?
    /// See `GPSDSession.bannerTimeout`.
    public let bannerTimeout: Double

    public init(
        host: String = GPSDSession.defaultHost, port: String = GPSDSession.defaultPort, device: String? = nil,
        backoff: ReconnectBackoff = .standard, satelliteDetail: Bool = true,
        lineObserver: (@Sendable (UnsafeBufferPointer<CChar>) -> Void)? = nil, commands: GPSDCommandChannel? = nil,
        epochQuiet: Double = EpochCollapser<Int, Int, Int>.defaultQuietInterval,
        onConnected: (@Sendable () -> Void)? = nil, bannerTimeout: Double = GPSDSession.bannerTimeout
    ) {
        self.bannerTimeout = bannerTimeout
        self.epochQuiet = epochQuiet
        self.onConnected = onConnected
        self.lineObserver = lineObserver
        self.commands = commands
        self.host = host
        self.port = port
        self.device = device
        self.backoff = backoff
        self.satelliteDetail = satelliteDetail
    }

    /// How often the read loop looks at `shouldStop` while gpsd is quiet.
    static let pollMicroseconds: Int32 = 200_000

    /// Runs on the calling thread until `shouldStop` returns true (checked at least every 0.2 s and after
    /// each event). The first connection's failure is thrown: gpsd is not there at all, or what answered
    /// is not gpsd (`notGPSD`, within `GPSDSession.bannerTimeout`). After that, losses become `gpsdLost`
    /// events and the source reconnects.
    public func run(shouldStop: () -> Bool, onEvent: (LiveEvent) -> Void) throws(GPSDError) {
        let reader = LiveReportReader(self)
        try reader.connect(shouldStop: shouldStop)
        while !shouldStop() {
            reader.step(seconds: Double(Self.pollMicroseconds) / 1e6, wakeDescriptor: -1, onEvent: onEvent)
        }
        reader.close(onEvent: onEvent)
    }

    /// The events as an `AsyncSequence`, read on a dedicated thread. Ending the iteration (or cancelling the
    /// task) stops the thread and closes the connection; a failure of the first connection ends the stream
    /// with that error.
    public func events() -> AsyncThrowingStream<LiveEvent, Error> {
        let (stream, continuation) = AsyncThrowingStream<LiveEvent, Error>.makeStream()
        let stop = StopFlag()
        continuation.onTermination = { _ in stop.set() }
        let started = DetachedThread.start { [self] in
            do throws(GPSDError) {
                try run(shouldStop: { stop.isSet }) { event in continuation.yield(event) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        if !started {
            continuation.finish(throwing: GPSDError.connectionLost(errno: EAGAIN))
        }
        return stream
    }

    /// Opens a connection and watches. With `awaitingBanner`, first waits for gpsd's VERSION banner (nil when
    /// `shouldStop` said so meanwhile); without, a peer that is not gpsd shows at the first read.
    fileprivate func connect(awaitingBanner: Bool = false, shouldStop: () -> Bool = { false }) throws(GPSDError)
        -> GPSDSession?
    {
        let session = try GPSDSession(host: host, port: port, epochQuiet: epochQuiet, bannerTimeout: bannerTimeout)
        if awaitingBanner, try !session.awaitBanner(shouldStop: shouldStop) { return nil }
        session.satelliteDetail = satelliteDetail
        session.collapsesEpochs = true
        session.lineObserver = lineObserver
        try session.watch(device: device)
        commands?.connected()
        onConnected?()
        return session
    }

    /// What a lost connection is reported as: gpsd went away, in words that cannot be mistaken for the
    /// receiver's loss.
    func lossReason(_ error: GPSDError) -> String {
        switch error {
        case .notGPSD, .connectionFailed: error.description
        case .connectionLost(let code) where code == 0: "gpsd at \(host):\(port) went away (it closed the connection)"
        case .connectionLost(let code): "gpsd at \(host):\(port) went away (\(systemMessage(code)))"
        default: "gpsd at \(host):\(port) went away (\(error))"
        }
    }
}

/// The read loop of `LiveReportSource.run`, one turn at a time: for a caller whose thread has other work
/// between reads (the location runtime reads gpsd on its own thread, so a report reaches the policy without
/// waking a second thread). Used on one thread only.
public final class LiveReportReader {
    private let source: LiveReportSource
    private var state: StreamState
    private var session: GPSDSession?
    /// Failed attempts since the connection was lost (or, before the first connection, since the start).
    private var failures = 0
    /// When to try connecting again (monotonic seconds); nil while connected.
    private var retryAt: Double?
    private var everConnected = false
    private var announcedAbsence = false

    public init(_ source: LiveReportSource) {
        self.source = source
        state = StreamState(watchedDevice: source.device)
    }

    /// The first connection, its failure thrown (`run`'s callers exit when gpsd is not there at all, or the
    /// port is something else's): waits for gpsd's banner (`GPSDSession.awaitBanner`) unless `shouldStop`.
    public func connect(shouldStop: () -> Bool = { false }) throws(GPSDError) {
        do {
            session = try source.connect(awaitingBanner: true, shouldStop: shouldStop)
            everConnected = session != nil
        } catch {
            source.commands?.disconnected(reason: error.description)
            throw error
        }
    }

    /// One turn: writes the queued commands and reads until a report, `seconds` pass (at most 0.2 s) or
    /// `wakeDescriptor` (or the command channel's) is readable; without a connection, tries again when its
    /// back-off is over. A first connection that fails here is announced once as `gpsdLost`, and a
    /// stream watched again after it starts over (`watching`), as a new `run` would.
    public func step(seconds: Double, wakeDescriptor: Int32, onEvent: (LiveEvent) -> Void) {
        let limit = min(max(seconds, 0), Double(LiveReportSource.pollMicroseconds) / 1e6)
        let commands = source.commands
        guard let current = session else {
            let now = monotonicSeconds()
            if let retryAt, now < retryAt {
                waitReadable(wakeDescriptor, commands?.wakeDescriptor ?? -1, seconds: min(limit, retryAt - now))
                return
            }
            reconnect(onEvent: onEvent)
            return
        }
        do throws(GPSDError) {
            // Drained before writing: a command queued after the write leaves its byte for the poll.
            commands?.drainWake()
            commands?.writeNext(now: monotonicSeconds()) { command throws(GPSDError) in
                try current.send(command.text)
            }
            switch try current.read(
                timeoutMicroseconds: Int32((limit * 1e6).rounded(.up)), wakeDescriptor: wakeDescriptor,
                alsoWakeOn: commands?.wakeDescriptor ?? -1)
            {
            case .timeout:
                break
            case .report(let report):
                // Reports come only after gpsd's banner: this is gpsd, and the next loss starts the back-off over.
                failures = 0
                let answer = commands?.observe(report)
                if case .fix(let fix) = report, let path = fix.device, !state.activeDevices.contains(path) {
                    for event in state.events(forFixFrom: path, fix: fix) { onEvent(event) }
                }
                if let event = StreamState.passedOn(report) {
                    onEvent(event)
                } else {
                    for event in state.events(for: report, host: source.host, port: source.port) { onEvent(event) }
                }
                if let answer { for event in state.events(forAnswer: answer) { onEvent(event) } }
            }
        } catch {
            // The epoch gpsd was still sending is as good as it will get; pass it on before the loss.
            for fix in current.pendingFixes() { onEvent(.fix(fix)) }
            current.close()
            session = nil
            if case .notGPSD = error {
                // Not gpsd (yet): tried again as a refused connection is, backing off, not ten times a second.
                failures += 1
                retryAt = monotonicSeconds() + source.backoff.delay(afterFailures: failures)
            } else {
                failures = 0
                retryAt = monotonicSeconds() + source.backoff.delay(afterFailures: 0)
            }
            commands?.disconnected(reason: error.description)
            if let event = state.connectionLost(source.lossReason(error)) { onEvent(event) }
        }
    }

    private func reconnect(onEvent: (LiveEvent) -> Void) {
        do throws(GPSDError) {
            // Without `awaitingBanner` a connection is all there is to wait for: nil never comes back here.
            guard let opened = try source.connect() else { return }
            if !everConnected {
                // As a fresh `run` after its first connection failed: the stream starts over.
                state = StreamState(watchedDevice: source.device)
                everConnected = true
            }
            session = opened
            // `failures` is left as it is until a report shows the peer is gpsd (see `step`).
            retryAt = nil
        } catch {
            if !everConnected {
                source.commands?.disconnected(reason: error.description)
                if !announcedAbsence {
                    announcedAbsence = true
                    onEvent(.gpsdLost(reason: "cannot reach gpsd at \(source.host):\(source.port): \(error)"))
                }
                retryAt = monotonicSeconds() + source.backoff.delay(afterFailures: failures)
                failures += 1
            } else {
                failures += 1
                retryAt = monotonicSeconds() + source.backoff.delay(afterFailures: failures)
            }
        }
    }

    /// The end: the epoch still held is passed on, the command channel closed, the connection closed.
    public func close(onEvent: (LiveEvent) -> Void) {
        source.commands?.disconnected(reason: "the gpsd connection has ended", closing: true)
        if let session {
            for fix in session.pendingFixes() { onEvent(.fix(fix)) }
            session.close()
        }
        session = nil
    }

    private func waitReadable(_ first: Int32, _ second: Int32, seconds: Double) {
        var pollers = (
            pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0)
        )
        let milliseconds = Int32((max(seconds, 0) * 1000).rounded(.up))
        _ = withUnsafeMutableBytes(of: &pollers) { raw in
            poll(raw.baseAddress?.assumingMemoryBound(to: pollfd.self), 2, milliseconds)
        }
    }
}

/// What the source remembers between reports: which devices are active, whether it has been connected
/// before, whether it has announced a loss. Pure, so the rules are tested without gpsd.
public struct StreamState: Sendable {
    let watchedDevice: String?
    private(set) var activeDevices: Set<String> = []
    private var version: GPSDVersion?
    private var hasWatched = false
    private var lost = false

    public init(watchedDevice: String?) {
        self.watchedDevice = watchedDevice
    }

    private func concerns(_ path: String) -> Bool {
        watchedDevice == nil || watchedDevice == path
    }

    /// What gpsd's answer to a command says of the devices: `Can't open PATH.` for an active device means it
    /// is gone, whether or not gpsd's close notice reached us (after a replug one did not, under load: gpsd
    /// drops what a slow client's socket cannot take, docs/gpsd.md §4). Its close, as the notice would have
    /// been; forgotten here too, so the device's next activation (a replugged receiver often gets its old
    /// path back) is announced again.
    public mutating func events(forAnswer outcome: GPSDCommandOutcome) -> [LiveEvent] {
        guard let path = outcome.unopenableDevice else { return [] }
        return closed(path, why: "cannot be opened") ?? []
    }

    /// A fix from a device not known to be active: gpsd has it open, whether or not its activation notice
    /// reached us (gpsd drops what a slow client's socket cannot take, docs/gpsd.md §4, and a replugged
    /// receiver's notice was lost so: every command after it failed with no active device). Its activation, as
    /// the notice would have been (no driver: what gpsd identified is asked again); nothing for a device
    /// not watched.
    public mutating func events(forFixFrom path: String, fix: Fix) -> [LiveEvent] {
        guard concerns(path) else { return [] }
        return activated(DeviceInfo(path: path, activated: fix.time ?? UTCTime(seconds: 0))) ?? []
    }

    /// `device` is active: its activation, and the receiver back after a loss; nil when it was known active.
    private mutating func activated(_ device: DeviceInfo) -> [LiveEvent]? {
        guard activeDevices.insert(device.path).inserted else { return nil }
        var events: [LiveEvent] = [.deviceActivated(device)]
        if lost, hasWatched {
            lost = false
            events.append(.receiverBack)
        }
        return events
    }

    /// `path` is gone (it `why`): its close, and the receiver lost with the last active device; nil when it
    /// was not known active.
    private mutating func closed(_ path: String, why: String) -> [LiveEvent]? {
        guard activeDevices.remove(path) != nil else { return nil }
        var events: [LiveEvent] = [.deviceClosed(path: path)]
        if activeDevices.isEmpty, !lost {
            lost = true
            events.append(.receiverLost(reason: "\(path) \(why)"))
        }
        return events
    }

    /// The one event for a report that changes nothing here (fixes, SKY, GST…); nil for the reports
    /// `events(for:)` has to look at. The read loop passes these on without building a list per report.
    public static func passedOn(_ report: Report) -> LiveEvent? {
        switch report {
        case .fix(let fix): return .fix(fix)
        case .version, .watch, .devices, .device: return nil
        default: return .report(report)
        }
    }

    public mutating func events(for report: Report, host: String, port: String) -> [LiveEvent] {
        if let event = Self.passedOn(report) { return [event] }
        switch report {
        case .version(let version):
            self.version = version
            return [.report(report)]
        case .watch(let enabled):
            guard enabled else { return [.report(report)] }
            if !hasWatched {
                hasWatched = true
                return [.watching(host: host, port: port, version: version)]
            }
            if lost {
                lost = false
                return [.receiverBack]
            }
            return []
        case .devices(let devices):
            var events: [LiveEvent] = [.report(report)]
            for device in devices where device.isActive && concerns(device.path) {
                if activeDevices.insert(device.path).inserted { events.append(.deviceActivated(device)) }
            }
            return events
        case .device(let device):
            guard concerns(device.path) else { return [.report(report)] }
            let events = device.isActive ? activated(device) : closed(device.path, why: "closed")
            return events ?? [.report(report)]
        default:
            return [.report(report)]
        }
    }

    /// The connection to gpsd broke: the loss (`gpsdLost`), unless one is already outstanding.
    public mutating func connectionLost(_ reason: String) -> LiveEvent? {
        activeDevices.removeAll()
        // A loss before the first WATCH echo still counts once we have been connected.
        hasWatched = true
        guard !lost else { return nil }
        lost = true
        return .gpsdLost(reason: reason)
    }
}

extension LocationAssembler {
    /// Takes one stream event: notes the reports and devices that give fixes their context, and returns the
    /// location a fix makes (nil for everything else, and for a fix without a position or a time).
    public mutating func location(after event: LiveEvent) -> Location? {
        switch event {
        case .fix(let fix): return location(for: fix)
        case .report(let report): note(report)
        case .deviceActivated(let device): note(.device(device))
        case .deviceClosed(let path): note(.device(DeviceInfo(path: path)))
        case .watching, .receiverLost, .gpsdLost, .receiverBack: break
        }
        return nil
    }
}
