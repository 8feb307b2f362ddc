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
    /// gpsd went away, or the watched device closed. The source keeps trying.
    case receiverLost(reason: String)
    /// Watching again after `receiverLost`.
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

/// Reads gpsd on its own thread (or the caller's, with `run`) and turns its stream into `LiveEvent`s:
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

    public init(
        host: String = GPSDSession.defaultHost, port: String = GPSDSession.defaultPort, device: String? = nil,
        backoff: ReconnectBackoff = .standard, satelliteDetail: Bool = true,
        lineObserver: (@Sendable (UnsafeBufferPointer<CChar>) -> Void)? = nil, commands: GPSDCommandChannel? = nil,
        epochQuiet: Double = EpochCollapser<Int, Int, Int>.defaultQuietInterval
    ) {
        self.epochQuiet = epochQuiet
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
    /// each event). The first connection's failure is thrown (gpsd is not there at all); after that, losses
    /// become `receiverLost` events and the source reconnects.
    public func run(shouldStop: () -> Bool, onEvent: (LiveEvent) -> Void) throws(GPSDError) {
        var state = StreamState(watchedDevice: device)
        var session: GPSDSession?
        do {
            session = try connect()
        } catch {
            commands?.disconnected(reason: error.description)
            throw error
        }
        var failures = 0
        while !shouldStop() {
            guard let current = session else {
                if sleep(seconds: backoff.delay(afterFailures: failures), shouldStop: shouldStop) { break }
                if let reopened = try? connect() {
                    session = reopened
                    failures = 0
                } else {
                    failures += 1
                }
                continue
            }
            do {
                // Drained before writing: a command queued after the write leaves its byte for the poll.
                commands?.drainWake()
                commands?.writeNext(now: monotonicSeconds()) { command throws(GPSDError) in
                    try current.send(command.text)
                }
                switch try current.read(
                    timeoutMicroseconds: Self.pollMicroseconds, wakeDescriptor: commands?.wakeDescriptor ?? -1)
                {
                case .timeout:
                    break
                case .report(let report):
                    commands?.observe(report)
                    if let event = StreamState.passedOn(report) {
                        onEvent(event)
                    } else {
                        for event in state.events(for: report, host: host, port: port) { onEvent(event) }
                    }
                }
            } catch {
                // The epoch gpsd was still sending is as good as it will get; pass it on before the loss.
                for fix in current.pendingFixes() { onEvent(.fix(fix)) }
                current.close()
                session = nil
                failures = 0
                commands?.disconnected(reason: error.description)
                if let event = state.connectionLost(error.description) { onEvent(event) }
            }
        }
        commands?.disconnected(reason: "the gpsd connection has ended", closing: true)
        if let session {
            for fix in session.pendingFixes() { onEvent(.fix(fix)) }
            session.close()
        }
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

    private func connect() throws(GPSDError) -> GPSDSession {
        let session = try GPSDSession(host: host, port: port, epochQuiet: epochQuiet)
        session.satelliteDetail = satelliteDetail
        session.collapsesEpochs = true
        session.lineObserver = lineObserver
        try session.watch(device: device)
        commands?.connected()
        return session
    }

    /// Sleeps in slices so a stop request is seen promptly; returns true when asked to stop.
    private func sleep(seconds: Double, shouldStop: () -> Bool) -> Bool {
        var remaining = seconds
        while remaining > 0 {
            if shouldStop() { return true }
            let slice = min(remaining, 0.1)
            usleep(UInt32(slice * 1_000_000))
            remaining -= slice
        }
        return shouldStop()
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
            if device.isActive {
                let isNew = activeDevices.insert(device.path).inserted
                var events: [LiveEvent] = [isNew ? .deviceActivated(device) : .report(report)]
                if isNew, lost, hasWatched {
                    lost = false
                    events.append(.receiverBack)
                }
                return events
            }
            guard activeDevices.remove(device.path) != nil else { return [.report(report)] }
            var events: [LiveEvent] = [.deviceClosed(path: device.path)]
            if activeDevices.isEmpty, !lost {
                lost = true
                events.append(.receiverLost(reason: "\(device.path) closed"))
            }
            return events
        default:
            return [.report(report)]
        }
    }

    /// The connection to gpsd broke: the loss, unless one is already outstanding.
    public mutating func connectionLost(_ reason: String) -> LiveEvent? {
        activeDevices.removeAll()
        // A loss before the first WATCH echo still counts once we have been connected.
        hasWatched = true
        guard !lost else { return nil }
        lost = true
        return .receiverLost(reason: reason)
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
        case .watching, .receiverLost, .receiverBack: break
        }
        return nil
    }
}
