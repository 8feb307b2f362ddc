@testable import Daemon
import Foundation
import GPSModel
import Lodestar
import Policy
import Synchronization
import SystemInterface
import Testing

/// A clock that moves only when told: both of its readings advance together, so the wall clock stays the
/// monotonic one plus the start's date.
final class ManualDaemonClock: DaemonClock {
    private let elapsed = Mutex(0.0)
    private let start: UTCTime

    /// `start` is the wall clock at monotonic second 0.
    init(start: UTCTime) {
        self.start = start
    }

    var monotonicSeconds: Double { elapsed.withLock { $0 } }
    var now: UTCTime { start.adding(seconds: monotonicSeconds) }

    /// Moves both readings on to monotonic second `seconds`, if that is ahead (a monotonic clock does not go
    /// back).
    func advance(to seconds: Double) {
        elapsed.withLock { $0 = max($0, seconds) }
    }
}

/// A run the test scripts on a manual clock: each update is due at a second of it, and waiting moves the
/// clock on to the next one due (nothing else moves it), so the service's loop turns in virtual time as fast
/// as it can, after NIOEmbedded's `EmbeddedEventLoop` (swift-nio, Sources/NIOEmbedded/Embedded.swift). Told
/// to shut down, it reports the receiver let go `exitTakes` seconds later and ends; with `exitTakes` nil it
/// never ends, as a manager stuck on a receiver that does not answer.
final class ScriptedRun: DaemonRun, @unchecked Sendable {
    let setup: DaemonSetup
    private let clock: ManualDaemonClock
    private var script: [(at: Double, update: LocationUpdate)]
    private var due: [LocationUpdate] = []
    private var ended = false
    private let exitTakes: Double?
    /// When the service told the run to shut down, on the clock.
    private(set) var shutDownAt: Double?

    init(setup: DaemonSetup, clock: ManualDaemonClock, script: [(at: Double, update: LocationUpdate)], exitTakes: Double? = 0.5) {
        self.setup = setup
        self.clock = clock
        self.script = script.sorted { $0.at < $1.at }
        self.exitTakes = exitTakes
    }

    private var exitAt: Double? { shutDownAt.flatMap { asked in exitTakes.map { asked + $0 } } }

    private func collect() {
        let now = clock.monotonicSeconds
        while let first = script.first, first.at <= now {
            due.append(first.update)
            script.removeFirst()
        }
        if !ended, let exitAt, now >= exitAt {
            due.append(.regime(.off, reason: "shutting down"))
            ended = true
        }
    }

    func waitForUpdates(seconds: Double) {
        collect()
        guard due.isEmpty, !ended else { return }
        let next = min(script.first?.at ?? .infinity, exitAt ?? .infinity)
        clock.advance(to: min(next, clock.monotonicSeconds + seconds))
        collect()
    }

    func take() -> (updates: [LocationUpdate], finished: Bool) {
        collect()
        defer { due = [] }
        return (due, ended)
    }

    var isFinished: Bool { ended && due.isEmpty }

    func shutDown() {
        if shutDownAt == nil { shutDownAt = clock.monotonicSeconds }
    }

    func newCaptureFailure() -> String? { nil }
    func finishCapture() -> String? { nil }
}

/// What a `Logger` was given, in order.
final class LogLines: Sendable {
    private let lines = Mutex<[Logger.Message]>([])
    var all: [Logger.Message] { lines.withLock { $0 } }
    var text: String { all.map(\.text).joined(separator: "\n") }
    func logger(_ label: String) -> Logger {
        Logger(label: label, logLevel: .debug) { message in self.lines.withLock { $0.append(message) } }
    }
}

/// The service on an injected clock and scripted runs: its timers (watchdog, status, state), its stop and
/// its reloads, checked in virtual time in a few milliseconds each. DaemonRunTests runs the same things
/// through the binary, a real gpsd and an emulated receiver, in real time.
@Suite struct DaemonVirtualTimeTests {
    /// A date that is not today: what the service stamps comes from its clock, not the system's.
    static let start = UTCTime(seconds: 1_700_000_000)

    /// A service in a scratch folder, with the jsonl output only, no store, and the notify socket.
    final class Rig {
        let folder: TemporaryDirectory
        let clock = ManualDaemonClock(start: DaemonVirtualTimeTests.start)
        let log = LogLines()
        let notifications: DatagramListener
        var runs: [ScriptedRun] = []
        var configuration = DaemonConfiguration()
        /// Outputs given to the service besides the configured ones.
        var extraOutputs: [any TrackOutput] = []

        init() throws {
            folder = try #require(TemporaryDirectory(prefix: "lodestar-outputs"))
            notifications = try DatagramListener(path: folder.path + "/notify.sock")
            configuration.stateDirectory = folder.path + "/state"
            configuration.runtimeDirectory = folder.path + "/run"
            configuration.store = nil
            configuration.outputs.gpx = nil
            configuration.outputs.socket = nil
        }

        deinit { folder.remove() }

        func setup(_ profileName: String = "car", change: (inout Profile) -> Void = { _ in }) throws -> DaemonSetup {
            var profile = try #require(ProfileStore.builtIn(profileName))
            change(&profile)
            return DaemonSetup(configuration: configuration, profile: profile, power: nil)
        }

        /// Runs the service until `stopAt` on the clock; each run it makes plays `script(setup, now)`.
        @discardableResult
        func run(
            _ setup: DaemonSetup, stopAt: Double, exitTakes: Double? = 0.5,
            reload: @escaping (Double) -> DaemonReload? = { _ in nil },
            wrap: @escaping (ScriptedRun) -> any DaemonRun = { $0 },
            script: @escaping (DaemonSetup, Double) -> [(at: Double, update: LocationUpdate)]
        ) -> DaemonOutcome {
            let clock = clock
            let extraOutputs = extraOutputs
            var hooks = DaemonService.Hooks(
                logger: log.logger("lodestar run"),
                makeOutputs: { [log] configuration in
                    DaemonOutputs.open(configuration, logger: log.logger("outputs")) + extraOutputs
                },
                // systemd reads its socket as messages come; so does the test, each turn, or the queue fills.
                shouldStop: { [notifications] in
                    _ = notifications.messages
                    return clock.monotonicSeconds >= stopAt
                },
                takeReload: { reload(clock.monotonicSeconds) })
            hooks.makeRun = { [unowned self] setup, _ in
                let run = ScriptedRun(
                    setup: setup, clock: clock, script: script(setup, clock.monotonicSeconds), exitTakes: exitTakes)
                runs.append(run)
                return wrap(run)
            }
            let environment = ["NOTIFY_SOCKET": notifications.path, "WATCHDOG_USEC": "2000000"]
            return DaemonService(setup: setup, hooks: hooks, environment: environment, clock: clock).runUntilStopped()
        }

        var status: DaemonStatus? { try? StatusFile(runtimeDirectory: configuration.runtimeDirectory).read() }
        var state: PersistedState { PersistedStateFile(stateDirectory: configuration.stateDirectory).load().state }
    }

    /// One location a second from `from` to `to` on the clock, stamped with the clock's date.
    static func locations(from: Int, to: Int) -> [(at: Double, update: LocationUpdate)] {
        (from...to).map { second in
            (Double(second), .locations([sampleLocation(at: start.adding(seconds: Double(second)))]))
        }
    }

    @Test func theWatchdogStatusAndStateKeepTheServiceClock() throws {
        let rig = try Rig()
        #expect(rig.run(try rig.setup(), stopAt: 120) { _, _ in Self.locations(from: 1, to: 100) } == .stopped)
        let messages = rig.notifications.messages
        #expect(messages.first == "READY=1", "\(messages.prefix(3))")
        // WATCHDOG_USEC 2 s: a ping every second of the clock, from the start to the stop.
        let pings = messages.count { $0 == "WATCHDOG=1" }
        #expect((115...123).contains(pings), "\(pings) pings over 120 s")
        // The status every updateInterval (5 s), and the systemd STATUS line with it.
        let statusLines = messages.count { $0.hasPrefix("STATUS=") }
        #expect((22...28).contains(statusLines), "\(statusLines) STATUS lines over 120 s")
        #expect(messages.last == "STOPPING=1" || messages.suffix(3).contains("STOPPING=1"), "\(messages.suffix(3))")
        let status = try #require(rig.status)
        #expect(status.started == Self.start)
        let updated = status.updated.interval(since: Self.start)
        #expect(updated >= 120 && updated < 122, "status updated \(updated) s after the start")
        #expect(status.fixesDelivered == 100)
        let state = rig.state
        #expect(state.fixesDelivered == 100)
        #expect(state.lastLocation?.timestamp == Self.start.adding(seconds: 100))
        let track = try String(contentsOfFile: rig.configuration.stateDirectory + "/track/locations.jsonl", encoding: .utf8)
        #expect(track.split(separator: "\n").count { $0.contains(#""type":"location""#) } == 100)
    }

    /// What an output was asked to do, in order, on the service's clock.
    final class OutputJournal: TrackOutput {
        let clock: ManualDaemonClock
        private(set) var entries: [(at: Double, what: String)] = []
        init(clock: ManualDaemonClock) { self.clock = clock }
        var name: String { "journal" }
        func write(_ record: TrackRecord, now: UTCTime) throws(OutputFailure) {
            if case .location = record { entries.append((clock.monotonicSeconds, "location")) }
        }
        func tick(now: UTCTime) throws(OutputFailure) {}
        func sync(now: UTCTime) throws(OutputFailure) { entries.append((clock.monotonicSeconds, "sync")) }
        func close() {}
        var syncTimes: [Double] { entries.filter { $0.what == "sync" }.map(\.at) }
    }

    /// The files follow the store's rule: synced when the store syncs (its interval, the receiver going
    /// down), after the lines of that update, and not once per location.
    @Test func theOutputsSyncWhenTheStoreDoesAndOnlyThen() throws {
        let rig = try Rig()
        rig.configuration.store = DaemonConfiguration.StoreSettings()
        rig.configuration.store?.syncInterval = 120
        let journal = OutputJournal(clock: rig.clock)
        rig.extraOutputs = [journal]
        rig.run(try rig.setup(), stopAt: 400) { _, _ in
            Self.locations(from: 1, to: 60) + [(60.5, .regime(.off, reason: "napping"))] + Self.locations(from: 300, to: 310)
        }
        let syncs = journal.syncTimes
        // The nap at 60.5; the interval from it at 180.5 finds nothing new (no sync of the files); the one at
        // 300.5, or the commit just after, syncs what came from 300; none for each of the 71 locations.
        #expect(syncs.count >= 2 && syncs.count <= 4, "\(syncs)")
        #expect(syncs.contains { $0 >= 60.5 && $0 < 61.5 }, "no sync when the receiver went down: \(syncs)")
        #expect(!syncs.contains { $0 >= 61.5 && $0 < 300 }, "a sync with nothing new since the nap: \(syncs)")
        #expect(syncs.contains { $0 >= 300 && $0 < 310 }, "no sync of the locations from 300: \(syncs)")
        #expect(!syncs.contains { $0 > 2 && $0 < 60.5 }, "a sync while locations came, before any interval: \(syncs)")
        // The last location before the nap was written before the nap's sync.
        let napSync = try #require(journal.entries.firstIndex { $0.what == "sync" && $0.at >= 60.5 })
        #expect(journal.entries[..<napSync].count { $0.what == "location" } == 60)
    }

    /// Reads the state file as each location arrives: what a daemon killed at that moment would resume from.
    final class StateFileWatcher: TrackOutput {
        let clock: ManualDaemonClock
        let file: PersistedStateFile
        /// The clock and the saved last location's second (nil: none saved yet), at each location.
        private(set) var seen: [(at: Double, saved: Double?)] = []
        init(clock: ManualDaemonClock, stateDirectory: String) {
            self.clock = clock
            file = PersistedStateFile(stateDirectory: stateDirectory)
        }
        var name: String { "state watcher" }
        func write(_ record: TrackRecord, now: UTCTime) throws(OutputFailure) {
            guard case .location = record else { return }
            let saved = file.load().state.lastLocation?.timestamp.interval(since: DaemonVirtualTimeTests.start)
            seen.append((clock.monotonicSeconds, saved))
        }
        func tick(now: UTCTime) throws(OutputFailure) {}
        func sync(now: UTCTime) throws(OutputFailure) {}
        func close() {}
    }

    /// A killed daemon resumes from at most a minute ago, though the state file is synced only as often as
    /// the store: the run's first location is saved at once, and the state every minute.
    @Test func theStateFileIsAtMostAMinuteBehindAndHasTheFirstLocationAtOnce() throws {
        let rig = try Rig()
        rig.configuration.store = DaemonConfiguration.StoreSettings()
        rig.configuration.store?.syncInterval = 300
        let watcher = StateFileWatcher(clock: rig.clock, stateDirectory: rig.configuration.stateDirectory)
        rig.extraOutputs = [watcher]
        rig.run(try rig.setup(), stopAt: 260) { _, _ in Self.locations(from: 10, to: 250) }
        let seen = watcher.seen
        #expect(seen.count == 241)
        let early = try #require(seen.first { $0.at >= 15 })
        #expect(early.saved == 10, "5 s after the first location the state file holds \(String(describing: early.saved))")
        let behind = seen.filter { $0.at >= 15 }.map { $0.at - ($0.saved ?? -1_000) }
        #expect(behind.allSatisfy { $0 <= 62 }, "the state file fell \(behind.max() ?? 0) s behind")
        #expect(rig.state.lastLocation?.timestamp == Self.start.adding(seconds: 250))
    }

    @Test func aStopLeavesTheReceiverInTheExitRegimeWellWithinTheLimit() throws {
        let rig = try Rig()
        let setup = try rig.setup {
            $0.receiver = .ublox8
            $0.exitRegime = .standby
        }
        #expect(setup.profile.effectiveExitRegime == .standby)
        rig.run(setup, stopAt: 30) { _, _ in Self.locations(from: 1, to: 20) }
        let log = rig.log.text
        #expect(log.contains("stopping: the receiver goes to standby"), "\(log)")
        #expect(log.contains("regime standby: shutting down: left in the exit regime"), "\(log)")
        #expect(rig.state.regime == .standby)
        let stopped = try #require(rig.log.all.last { $0.text.hasPrefix("stopped ") }?.text)
        let seconds = try #require(Double(stopped.split(separator: " ")[1]), "\(stopped)")
        #expect(seconds >= 0.5 && seconds <= 0.8, "\(stopped)")
        #expect(!log.contains("did not finish"))
    }

    @Test func aRunThatNeverLetsGoIsLeftAtTheStopLimit() throws {
        let rig = try Rig()
        let stopAt = 30.0
        rig.run(try rig.setup(), stopAt: stopAt, exitTakes: nil) { _, _ in Self.locations(from: 1, to: 20) }
        let log = rig.log.text
        #expect(log.contains("the manager did not finish within \(DaemonService.managerStopLimit) s of the stop"), "\(log)")
        let left = rig.clock.monotonicSeconds - stopAt
        #expect(left > DaemonService.managerStopLimit && left < DaemonService.managerStopLimit + 0.5, "left after \(left) s")
        #expect(abs((rig.runs.first?.shutDownAt ?? 0) - stopAt) < 0.25)
    }

    @Test func aReloadSwapsTheRunAndARefusedOneKeepsTheRunningConfig() throws {
        let rig = try Rig()
        let new = try rig.setup("always-on")
        var reloads: [DaemonReload] = [.accepted(new), .rejected(["outputs.jsonl.fsyncInterval: not one of never, rotation"])]
        var asked: [Double] = []
        rig.run(
            try rig.setup(), stopAt: 90,
            reload: { now in
                guard let next = reloads.first, now >= (reloads.count == 2 ? 30 : 60) else { return nil }
                asked.append(now)
                reloads.removeFirst()
                return next
            },
            script: { _, now in Self.locations(from: Int(now) + 1, to: Int(now) + 20) })
        try #require(asked.count == 2)
        // The old run was told to shut down when the reload came, and a run of the new profile started; the
        // refused reload made no run.
        #expect(rig.runs.map(\.setup.profile.name) == ["car", "always-on"])
        #expect(rig.runs.first?.shutDownAt == asked[0])
        let messages = rig.notifications.messages
        let reloading = try #require(messages.firstIndex(of: "RELOADING=1"))
        // MONOTONIC_USEC is the service's clock when the reload began.
        #expect(messages[reloading + 1] == "MONOTONIC_USEC=\(UInt64(asked[0] * 1_000_000))", "\(messages[reloading...].prefix(3))")
        #expect(messages[reloading...].contains("READY=1"))
        let log = rig.log.text
        #expect(log.contains("reloading: profile always-on"))
        #expect(log.contains("reload refused, the running config stays:\n  outputs.jsonl.fsyncInterval"), "\(log)")
        let status = try #require(rig.status)
        #expect(status.profile == "always-on")
        #expect(status.lastError == "reload refused: outputs.jsonl.fsyncInterval: not one of never, rotation")
        #expect(status.lastErrorAt == Self.start.adding(seconds: asked[1]))
        // Locations of both runs, none lost to the swap.
        #expect(status.fixesDelivered == 40)
    }

    @Test func aRestartResumesFromTheSavedState() throws {
        let rig = try Rig()
        rig.run(try rig.setup(), stopAt: 20) { _, _ in Self.locations(from: 1, to: 10) }
        let last = Self.start.adding(seconds: 10)
        var restored: [Location?] = []
        let clock = rig.clock
        var hooks = DaemonService.Hooks(
            logger: rig.log.logger("lodestar run"), makeOutputs: { _ in [] },
            shouldStop: { clock.monotonicSeconds >= 30 })
        hooks.makeRun = { setup, location in
            restored.append(location)
            return ScriptedRun(setup: setup, clock: clock, script: [])
        }
        _ = DaemonService(setup: try rig.setup(), hooks: hooks, environment: [:], clock: clock).runUntilStopped()
        #expect(restored.map { $0?.timestamp } == [last])
        #expect(rig.log.text.contains("restored: last location \(last.iso8601)"), "\(rig.log.text)")
        #expect(rig.log.text.contains("10 locations over 1 earlier run"))
        #expect(rig.state.runs == 2)
        #expect(rig.state.fixesDelivered == 10)
    }

    /// A scripted run that, from second `from` on the clock, connects one client to the locations socket each
    /// time the service waits, and polls what the service watches, as ManagedRun does.
    final class ConnectingRun: DaemonRun {
        let inner: ScriptedRun
        let clock: ManualDaemonClock
        let socketPath: String
        let from: Double
        private var toConnect: Int
        private(set) var clients: [Int32] = []

        init(_ inner: ScriptedRun, clock: ManualDaemonClock, socketPath: String, clients: Int, from: Double) {
            self.inner = inner
            self.clock = clock
            self.socketPath = socketPath
            self.from = from
            toConnect = clients
        }

        func waitForUpdates(seconds: Double) { inner.waitForUpdates(seconds: seconds) }

        func waitForUpdates(seconds: Double, watching descriptors: [Int32]) -> Bool {
            if toConnect > 0, clock.monotonicSeconds >= from, let client = try? unixStreamSocket() {
                if (try? withUnixSocketAddress(socketPath) { connect(client, $0, $1) }) == 0 {
                    clients.append(client)
                } else {
                    close(client)
                }
                toConnect -= 1
            }
            var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if !entries.isEmpty, poll(&entries, nfds_t(entries.count), 0) > 0 { return true }
            inner.waitForUpdates(seconds: seconds)
            return false
        }

        func take() -> (updates: [LocationUpdate], finished: Bool) { inner.take() }
        var isFinished: Bool { inner.isFinished }
        func shutDown() { inner.shutDown() }
        func newCaptureFailure() -> String? { nil }
        func finishCapture() -> String? { nil }
    }

    /// Two clients that connect one just after the other get the same lines: the second is accepted before
    /// the next location, though the service has just woken for the first.
    @Test func aClientThatConnectsJustAfterAnotherGetsTheSameLocations() throws {
        let rig = try Rig()
        var socket = DaemonConfiguration.SocketOutput()
        socket.group = nil
        rig.configuration.outputs.socket = socket
        let socketPath = rig.configuration.runtimeDirectory + "/locations.sock"
        var connecting: ConnectingRun?
        rig.run(
            try rig.setup(), stopAt: 12,
            wrap: { run in
                let wrapped = ConnectingRun(run, clock: rig.clock, socketPath: socketPath, clients: 2, from: 2.45)
                connecting = wrapped
                return wrapped
            }
        ) { _, _ in
            // Ten a second, as at the bench's speeds: one is due within any wait.
            (10...100).map { tenth in
                let second = Double(tenth) / 10
                return (second, .locations([sampleLocation(at: Self.start.adding(seconds: second))]))
            }
        }
        let clients = try #require(connecting?.clients)
        #expect(clients.count == 2)
        let lines = clients.map { client -> [Substring] in
            defer { close(client) }
            return readAvailable(client).split(separator: "\n")
        }
        // Connected at 2.5 s: each has the locations from then to 10 s.
        #expect((74...76).contains(lines.first?.count ?? 0), "\(lines.map(\.count))")
        let same = lines.first == lines.last
        #expect(same, "lines per client \(lines.map(\.count)), first \(lines.map { $0.first?.prefix(60) ?? "" })")
    }
}
