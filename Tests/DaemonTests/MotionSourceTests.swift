@testable import Daemon
import GPIOLines
import Lodestar
import Synchronization
import SystemInterface
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A motion line played by a pipe: each byte written is one edge, `activating` says whether edges go to the
/// active level, `level` is what the line reads, and a closed write end is a failed read.
private final class PipeMotionSource: MotionEdgeSource, @unchecked Sendable {
    let readEnd: Int32
    private(set) var writeEnd: Int32
    let activating: Bool
    let level = Mutex(false)
    let description = "motion pipe"

    init(activating: Bool = true) throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemError("pipe", "motion pipe") }
        (readEnd, writeEnd, self.activating) = (ends[0], ends[1], activating)
    }

    deinit {
        close(readEnd)
        closeWriteEnd()
    }

    /// A closed write end is a hang-up: the next read finds the line gone. Closed once: a second close could
    /// close a descriptor another test has opened since.
    func closeWriteEnd() {
        if writeEnd >= 0 { close(writeEnd) }
        writeEnd = -1
    }

    var descriptor: Int32 { readEnd }

    func edges(_ count: Int) {
        let bytes = [UInt8](repeating: 1, count: count)
        _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, count) }
    }

    func readActivations() throws(MotionSourceError) -> Int {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, 64) }
        if count == 0 { throw MotionSourceError("motion pipe: closed") }
        if count < 0 { throw MotionSourceError("motion pipe: \(errno)") }
        return activating ? count : 0
    }

    func readLevel() throws(MotionSourceError) -> Bool { level.withLock { $0 } }
}

/// Waits up to 2 s for `condition`.
private func eventually(_ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + 2
    while !condition() {
        if monotonicSeconds() > deadline { return false }
        sleepSeconds(0.005)
    }
    return true
}

@Suite struct MotionSourceTests {
    @Test func theConfigReadsAMotionLineAndWritesItBack() throws {
        let text = #"{"motion": {"gpio": {"chip": "gpiochip1", "line": 27, "activeLow": true, "debounce": 0.5, "ignition": true}}}"#
        let loaded = try DaemonConfigurationReader.parse(Array(text.utf8), file: "test.json")
        var expected = DaemonConfiguration.MotionSettings(line: 27)
        (expected.chip, expected.activeLow, expected.debounce, expected.ignition) = ("gpiochip1", true, 0.5, true)
        #expect(loaded.configuration.motion == expected)
        let written = loaded.configuration.jsonText
        let again = try DaemonConfigurationReader.parse(Array(written.utf8), file: "again.json")
        #expect(again.configuration.motion == expected)
        let defaults = try DaemonConfigurationReader.parse(Array(#"{"motion": {"gpio": {"line": 4}}}"#.utf8), file: "t")
        #expect(defaults.configuration.motion == DaemonConfiguration.MotionSettings(line: 4))
        #expect(DaemonConfiguration().motion == nil)
    }

    @Test func aMotionLineThatCannotBeIsNamedByItsKeyPath() {
        func problems(_ text: String) -> [String] {
            do throws(DaemonConfigurationError) {
                _ = try DaemonConfigurationReader.parse(Array(text.utf8), file: "test.json")
                return []
            } catch {
                return error.problems.map(\.description)
            }
        }
        #expect(problems(#"{"motion": {"gpio": {"chip": "gpiochip0"}}}"#) == [
            "motion.gpio.line: is missing (allowed: a whole number from 0 to 4095)"
        ])
        #expect(problems(#"{"motion": {"gpio": {"line": 3, "debounce": -1}}}"#) == [
            "motion.gpio.debounce: is -1, out of range (allowed: 0 to 3600 seconds)"
        ])
        #expect(problems(#"{"motion": {"gpio": true}}"#).first?.hasPrefix("motion.gpio: is a boolean, not an object") == true)
        #expect(problems(#"{"motion": {"gpio": {"line": 3, "edge": "rising"}}}"#).first?.hasPrefix("motion.gpio.edge: ") == true)
        #expect(problems(#"{"motion": {"gpio": null}}"#) == [])
        #expect(problems(#"{"motion": {"gpio": {"line": 3, "ignition": 1}}}"#).first?.hasPrefix("motion.gpio.ignition: ") == true)
    }

    @Test func aSetupWithAMotionLineRunsTheProfileWithItsSensor() throws {
        let loaded = try DaemonConfigurationReader.defaults()
        #expect(!loaded.profile.policy.motion.sensor)
        let without = DaemonSetup(configuration: loaded.configuration, profile: loaded.profile, power: nil)
        #expect(!without.profile.policy.motion.sensor)
        let source = try PipeMotionSource()
        let with = DaemonSetup(
            configuration: loaded.configuration, profile: loaded.profile, power: nil,
            motion: MotionSetup(source: source, debounce: 1))
        #expect(with.profile.policy.motion.sensor)
    }

    @Test func aMissingChipIsRefusedAtSetup() {
        var configuration = DaemonConfiguration()
        configuration.motion = DaemonConfiguration.MotionSettings(line: 27)
        configuration.motion?.chip = "gpiochip-lodestar-missing"
        #expect(throws: MotionSourceError.self) { _ = try DaemonSetup.motion(for: configuration) }
    }

    /// An ignition line read for its level: the level as the watch starts, then each new one once the edges have
    /// settled for the debounce interval; a flicker back to the level last given says nothing, and no edge is a
    /// hint.
    @Test func anIgnitionLinesLevelIsHandedOverOnceSettled() throws {
        let source = try PipeMotionSource()
        let clock = Mutex(100.0)
        let levels = Mutex<[Bool]>([])
        let hints = Atomic<Int>(0)
        let watcher = MotionWatcher(
            MotionSetup(source: source, debounce: 1, ignition: true), now: { clock.withLock { $0 } },
            hint: { hints.add(1, ordering: .relaxed) }, ignition: { on in levels.withLock { $0.append(on) } })
        #expect(watcher.start())
        #expect(eventually { levels.withLock { $0 } == [false] })
        source.level.withLock { $0 = true }
        source.edges(3)
        sleepSeconds(0.3)
        #expect(levels.withLock { $0 } == [false], "not settled yet")
        clock.withLock { $0 = 101.5 }
        #expect(eventually { levels.withLock { $0 } == [false, true] })
        source.edges(2)
        clock.withLock { $0 = 103 }
        sleepSeconds(0.4)
        #expect(levels.withLock { $0 } == [false, true], "the same level again")
        #expect(hints.load(ordering: .relaxed) == 0)
        #expect(watcher.newIgnitionLevels() == ["motion pipe: ignition off", "motion pipe: ignition on"])
        #expect(watcher.newIgnitionLevels().isEmpty, "taken once")
        watcher.stop()
        #expect(watcher.newFailure() == nil)
    }

    @Test func activationsBecomeDebouncedHintsAndStopEndsTheWatchAtOnce() throws {
        let source = try PipeMotionSource()
        let clock = Mutex(100.0)
        let hints = Atomic<Int>(0)
        let watcher = MotionWatcher(MotionSetup(source: source, debounce: 1), now: { clock.withLock { $0 } }) {
            hints.add(1, ordering: .relaxed)
        }
        #expect(watcher.start())
        source.edges(3)
        #expect(eventually { hints.load(ordering: .relaxed) == 1 })
        clock.withLock { $0 = 100.5 }
        source.edges(1)
        sleepSeconds(0.05)
        #expect(hints.load(ordering: .relaxed) == 1, "within the debounce interval")
        clock.withLock { $0 = 101.5 }
        source.edges(2)
        #expect(eventually { hints.load(ordering: .relaxed) == 2 })
        let asked = monotonicSeconds()
        watcher.stop()
        #expect(!watcher.isWatching)
        #expect(monotonicSeconds() - asked < 1)
        #expect(watcher.newFailure() == nil)
    }

    @Test func edgesAwayFromTheActiveLevelAreNoHints() throws {
        let source = try PipeMotionSource(activating: false)
        let hints = Atomic<Int>(0)
        let watcher = MotionWatcher(MotionSetup(source: source, debounce: 0)) { hints.add(1, ordering: .relaxed) }
        #expect(watcher.start())
        source.edges(5)
        sleepSeconds(0.1)
        #expect(hints.load(ordering: .relaxed) == 0)
        watcher.stop()
    }

    @Test func aLineThatFailsEndsTheWatchAndSaysSoOnce() throws {
        let source = try PipeMotionSource()
        let watcher = MotionWatcher(MotionSetup(source: source, debounce: 1)) {}
        #expect(watcher.start())
        source.closeWriteEnd()
        #expect(eventually { !watcher.isWatching })
        let failure = try #require(watcher.newFailure())
        #expect(failure == "motion pipe: closed; no more motion hints: the pauses' fallback probes go on")
        #expect(watcher.newFailure() == nil)
        watcher.stop()
    }
}
