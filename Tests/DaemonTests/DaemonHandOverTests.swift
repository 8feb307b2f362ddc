@testable import Daemon
import GPSModel
import Lodestar
import Policy
import Synchronization
import SystemInterface
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A run with a thread of its own, as `ManagedRun`'s manager has: once the service asks for its updates
/// directly, it offers each one to the service's handler on its thread and keeps the ones refused (the service's
/// thread had the gate) for `take()`, as `ManagedRun` does.
final class ThreadedRun: DaemonRun, @unchecked Sendable {
    private let updates: [LocationUpdate]
    private let inbox = Mutex<(updates: [LocationUpdate], finished: Bool)>(([], false))
    /// Updates the service took on this run's thread, and the ones left for `take()`.
    let direct = Atomic(0)
    let refused = Atomic(0)

    init(updates: [LocationUpdate]) {
        self.updates = updates
    }

    func deliverDirectly(to taker: any UpdateTaker) {
        let updates = updates
        let started = DetachedThread.start { [self] in
            for update in updates {
                if taker.take(update) {
                    direct.add(1, ordering: .relaxed)
                } else {
                    refused.add(1, ordering: .relaxed)
                    inbox.withLock { $0.updates.append(update) }
                }
                // About a fix's work apart, so that the service's thread takes the gate in between.
                sleepSeconds(0.0005)
            }
            inbox.withLock { $0.finished = true }
        }
        #expect(started)
    }

    func waitForUpdates(seconds: Double) {
        sleepSeconds(min(seconds, 0.001))
    }

    func take() -> (updates: [LocationUpdate], finished: Bool) {
        inbox.withLock { inbox in
            defer { inbox.updates.removeAll() }
            return (inbox.updates, inbox.finished)
        }
    }

    var isFinished: Bool { inbox.withLock { $0.finished && $0.updates.isEmpty } }
    func shutDown() {}
    func newCaptureFailure() -> String? { nil }
    func finishCapture() -> String? { nil }
}

/// The service takes a run's updates on the run's thread while its own thread does not hold it, and through
/// the run's inbox when it does: every update once, in the order the run made them.
@Suite struct DaemonHandOverTests {
    @Test func updatesHandedOverOnTheRunsThreadOrThroughItsInboxKeepTheirOrder() throws {
        let folder = try #require(TemporaryDirectory(prefix: "lodestar-handover"))
        defer { folder.remove() }
        var configuration = DaemonConfiguration()
        configuration.stateDirectory = folder.path + "/state"
        configuration.runtimeDirectory = folder.path + "/run"
        configuration.store = nil
        configuration.outputs.gpx = nil
        configuration.outputs.socket = nil
        let profile = try #require(ProfileStore.builtIn("always-on"))
        let start = UTCTime(seconds: 1_700_000_000)
        let count = 2000
        let updates = (1...count).map { LocationUpdate.locations([sampleLocation(at: start.adding(seconds: Double($0)))]) }
        let run = ThreadedRun(updates: updates)
        let seen = Mutex<[UTCTime]>([])
        var hooks = DaemonService.Hooks(
            logger: .discarding(label: "hand-over test"), makeOutputs: { _ in [] }, shouldStop: { false })
        hooks.makeRun = { _, _ in run }
        hooks.observe = { update in
            if case .locations(let locations) = update { seen.withLock { $0 += locations.map(\.timestamp) } }
        }
        let service = DaemonService(
            setup: DaemonSetup(configuration: configuration, profile: profile, power: nil), hooks: hooks,
            environment: [:])
        #expect(service.runUntilStopped() == .stopped)
        let timestamps = seen.withLock { $0 }
        #expect(timestamps == (1...count).map { start.adding(seconds: Double($0)) }, "\(timestamps.count) of \(count)")
        let (direct, refused) = (run.direct.load(ordering: .relaxed), run.refused.load(ordering: .relaxed))
        #expect(direct + refused == count)
        #expect(direct > 0, "none handed over on the run's thread (\(refused) through the inbox)")
        print("hand-over: \(direct) updates on the run's thread, \(refused) through its inbox")
    }
}
