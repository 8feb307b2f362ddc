import GPSD
import GPSModel
import Synchronization
import SystemInterface

/// A plain gpsd client on a thread of its own that notes every fix with a position gpsd reports, as the
/// location the live path makes of it, until gpsd goes away or `stop()`: what a test holds the locations a
/// manager delivered against.
public final class GPSDFixWatcher: Sendable {
    private struct State {
        var locations: [Location] = []
        var stopping = false
        var done = false
    }

    /// Shared with the reading thread, which may outlive a watcher nobody stopped.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let shared = Shared()

    /// The session moves to the reading thread once made and is used there only.
    private final class SessionHandOff: @unchecked Sendable {
        let session: GPSDSession
        init(_ session: GPSDSession) { self.session = session }
    }

    /// Connected and watching every device when it returns.
    public init(port: UInt16) throws(GPSDError) {
        let session = try GPSDSession(host: "127.0.0.1", port: String(port))
        try session.watch()
        let handOff = SessionHandOff(session)
        let launched = DetachedThread.start { [shared] in
            var assembler = LocationAssembler()
            while !shared.state.withLock({ $0.stopping }) {
                guard let result = try? handOff.session.read(timeoutMicroseconds: 50_000) else { break }
                guard case .report(let report) = result else { continue }
                guard case .fix(let fix) = report else {
                    assembler.note(report)
                    continue
                }
                guard fix.hasPosition, let location = assembler.location(for: fix) else { continue }
                shared.state.withLock { $0.locations.append(location) }
            }
            shared.state.withLock { $0.done = true }
        }
        if !launched { shared.state.withLock { $0.done = true } }
    }

    deinit { stop() }

    /// The fixes seen so far, one per timestamp (gpsd reports an epoch more than once), in the order gpsd
    /// reported them.
    public var locations: [Location] {
        shared.state.withLock { state in
            var seen = Set<UTCTime>()
            return state.locations.filter { seen.insert($0.timestamp).inserted }
        }
    }

    /// Ends the reading thread; returns once it has ended.
    public func stop() {
        shared.state.withLock { $0.stopping = true }
        while !shared.state.withLock({ $0.done }) { sleepSeconds(0.005) }
    }
}
