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

/// The problems a config's text has, as the reader words them; empty when it reads.
private func problems(_ text: String) -> [String] {
    do throws(DaemonConfigurationError) {
        _ = try DaemonConfigurationReader.parse(Array(text.utf8), file: "test.json")
        return []
    } catch {
        return error.problems.map(\.description)
    }
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

/// Stops `watcher` and expects it to end within a second of being asked, with no failure reported.
private func expectStopsWithinASecond(_ watcher: MotionWatcher, sourceLocation: SourceLocation = #_sourceLocation) {
    let asked = monotonicSeconds()
    watcher.stop()
    #expect(!watcher.isWatching, sourceLocation: sourceLocation)
    #expect(monotonicSeconds() - asked < 1, sourceLocation: sourceLocation)
    #expect(watcher.newFailure() == nil, sourceLocation: sourceLocation)
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
        expectStopsWithinASecond(watcher)
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

/// An IIO accelerometer's sysfs folder played by ordinary files: `name`, the three raw channels, a scale and an
/// offset. A channel is written over in place, so a descriptor the source keeps open reads the new value, as
/// it would read a fresh sample from the driver.
private struct FakeIIODevices {
    let root: TemporaryDirectory
    var devices: String { root.path }

    init() throws {
        root = try #require(TemporaryDirectory(prefix: "lodestar-iio"))
    }

    func write(_ path: String, _ text: String) throws {
        let file = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate])
        defer { try? file.close() }
        try file.writeAll(Array((text + "\n").utf8))
    }

    /// A device folder `iio:deviceN` named `name`, its axes at `raw` (counts) with `scale` m/s² a count.
    @discardableResult
    func device(
        _ number: Int, name: String, raw: (Int, Int, Int) = (0, 0, 16384), scale: String = "0.000598",
        axes: [String] = ["x", "y", "z"]
    ) throws -> String {
        let folder = "\(devices)/iio:device\(number)"
        #expect(mkdir(folder, 0o755) == 0)
        try write(folder + "/name", name)
        try write(folder + "/in_accel_scale", scale)
        for axis in axes { try write("\(folder)/in_accel_\(axis)_raw", "0") }
        try set(folder, raw, axes: axes)
        return folder
    }

    func set(_ folder: String, _ raw: (Int, Int, Int), axes: [String] = ["x", "y", "z"]) throws {
        let values = [raw.0, raw.1, raw.2]
        for (index, axis) in axes.enumerated() { try write("\(folder)/in_accel_\(axis)_raw", String(values[index])) }
    }
}

@Suite struct IIOAccelerometerTests {
    @Test func theConfigReadsAnAccelerometerAndWritesItBack() throws {
        let text = #"{"motion": {"iio": {"device": "mpu6050", "threshold": 0.8, "sampleInterval": 0.1, "debounce": 2}}}"#
        let loaded = try DaemonConfigurationReader.parse(Array(text.utf8), file: "test.json")
        var expected = DaemonConfiguration.IIOMotionSettings(device: "mpu6050")
        (expected.threshold, expected.sampleInterval, expected.debounce) = (0.8, 0.1, 2)
        #expect(loaded.configuration.motionIIO == expected)
        #expect(loaded.configuration.motion == nil)
        let again = try DaemonConfigurationReader.parse(Array(loaded.configuration.jsonText.utf8), file: "again.json")
        #expect(again.configuration.motionIIO == expected)
        let defaults = try DaemonConfigurationReader.parse(Array(#"{"motion": {"iio": {"device": "iio:device1"}}}"#.utf8), file: "t")
        #expect(defaults.configuration.motionIIO == DaemonConfiguration.IIOMotionSettings(device: "iio:device1"))
        #expect(DaemonConfiguration().motionIIO == nil)
    }

    @Test func anAccelerometerThatCannotBeIsNamedByItsKeyPath() {
        #expect(problems(#"{"motion": {"iio": {"threshold": 1}}}"#) == [
            #"motion.iio.device: is missing (allowed: an IIO device such as "iio:device0" or "mpu6050")"#
        ])
        #expect(problems(#"{"motion": {"iio": {"device": "mpu6050", "threshold": 0}}}"#) == [
            "motion.iio.threshold: is 0, out of range (allowed: 0.01 to 100 m/s²)"
        ])
        #expect(problems(#"{"motion": {"iio": {"device": "mpu6050", "sampleInterval": 120}}}"#) == [
            "motion.iio.sampleInterval: is 120, out of range (allowed: 0.01 to 60 seconds)"
        ])
        #expect(problems(#"{"motion": {"iio": {"device": "mpu6050", "axis": "z"}}}"#).first?.hasPrefix("motion.iio.axis: ") == true)
        #expect(problems(#"{"motion": {"iio": "mpu6050"}}"#).first?.hasPrefix("motion.iio: is a string, not an object") == true)
        #expect(problems(#"{"motion": {"iio": {"device": "mpu6050"}, "gpio": {"line": 4}}}"#) == [
            "motion.iio: is set, and so is motion.gpio (allowed: one motion source, the other null)"
        ])
    }

    /// Still with the noise of a MEMS part (up to 0.1 m/s² on each axis, so a sample differs from the average by
    /// at most 0.35 m/s²), then a pull-away at 2 m/s², then a tilt of 5.2° that stays: the pull-away is motion at
    /// once; the tilt is motion while the average takes it in, and still after.
    @Test func motionIsAChangeFromTheRecentAverage() {
        var change = AccelerationChange(threshold: 0.5)
        func isMotion(_ sample: SIMD3<Double>, at t: Double) -> Bool { change.isMotion(sample, at: t) }
        let gravity = SIMD3<Double>(0, 0, 9.81)
        var t = 0.0
        var noise = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let jitter = SIMD3<Double>((0..<3).map { _ in Double.random(in: -0.1...0.1, using: &noise) })
            #expect(!isMotion(gravity + jitter, at: t), "noise at \(t) s")
            t += 0.2
        }
        #expect(isMotion(gravity + SIMD3(2, 0, 0), at: t))
        t += 0.2
        // Back at rest: the average took in a tenth of the jolt (0.2 s of its 2 s), less than the threshold.
        #expect(!isMotion(gravity, at: t))
        t += 0.2
        for _ in 0..<50 {
            _ = isMotion(gravity, at: t)
            t += 0.2
        }
        let tilt = SIMD3<Double>(0, 9.81 * sin(5.2 * Double.pi / 180), 9.81 * cos(5.2 * Double.pi / 180))
        var moving: [Bool] = []
        for _ in 0..<100 {
            moving.append(isMotion(tilt, at: t))
            t += 0.2
        }
        // 0.89 m/s² at first, 0.9 of that a sample later (0.53 m/s² at the sixth, 0.47 at the seventh): motion
        // for 6 samples, then still for good.
        #expect(moving.prefix(6).allSatisfy { $0 }, "\(moving.prefix(10))")
        #expect(!moving.dropFirst(6).contains(true), "the tilt is taken in: \(moving.prefix(10))")
    }

    /// A slow turn of gravity (a boat's list changing over a minute) is followed, not called motion; a gap
    /// longer than `maximumGap` starts the average again.
    @Test func aSlowChangeAndAGapAreNotMotion() {
        var change = AccelerationChange(threshold: 0.5)
        let gap = change.maximumGap
        func isMotion(_ sample: SIMD3<Double>, at t: Double) -> Bool { change.isMotion(sample, at: t) }
        for step in 0...600 {
            let angle = Double(step) / 600 * 20 * Double.pi / 180
            let sample = SIMD3<Double>(9.81 * sin(angle), 0, 9.81 * cos(angle))
            #expect(!isMotion(sample, at: Double(step) * 0.1), "at step \(step)")
        }
        #expect(!isMotion(SIMD3(0, 9.81, 0), at: 60 + gap + 1), "after a gap")
        #expect(!isMotion(SIMD3(0, 9.81, 0), at: 60 + gap + 1.2))
        #expect(isMotion(SIMD3(1, 9.81, 0), at: 60 + gap + 1.4))
    }

    @Test func theDeviceIsFoundByFolderPathOrDriverName() throws {
        let fake = try FakeIIODevices()
        defer { fake.root.remove() }
        try fake.device(0, name: "bmp280", axes: [])
        let accelerometer = try fake.device(1, name: "mpu6050")
        for device in ["mpu6050", "iio:device1", accelerometer] {
            let source = try IIOAccelerometer(device: device, threshold: 0.5, sampleInterval: 0.2, devices: fake.devices)
            #expect(source.directory == accelerometer)
            #expect(source.description == "motion IIO iio:device1 (mpu6050)")
            #expect(source.descriptor == -1 && source.sampleInterval == 0.2)
        }
        #expect {
            _ = try IIOAccelerometer(device: "adxl345", threshold: 0.5, sampleInterval: 0.2, devices: fake.devices)
        } throws: { error in
            (error as? MotionSourceError)?.description
                == "motion.iio.device adxl345: no IIO device of that name in \(fake.devices) (there: iio:device0 (bmp280), iio:device1 (mpu6050))"
        }
        #expect {
            _ = try IIOAccelerometer(device: "bmp280", threshold: 0.5, sampleInterval: 0.2, devices: fake.devices)
        } throws: { error in
            (error as? MotionSourceError)?.description
                == "motion IIO iio:device0 (bmp280): cannot open \(fake.devices)/iio:device0/in_accel_x_raw: not an accelerometer's raw channel"
        }
        let empty = try #require(TemporaryDirectory(prefix: "lodestar-iio-none"))
        defer { empty.remove() }
        #expect {
            _ = try IIOAccelerometer(device: "mpu6050", threshold: 0.5, sampleInterval: 0.2, devices: empty.path)
        } throws: { error in
            (error as? MotionSourceError)?.description.hasSuffix(
                "(none there: is the driver loaded? an I²C accelerometer needs its device-tree overlay)") == true
        }
    }

    /// (raw + offset) × scale, with a scale and offset per axis where the driver gives them, else shared.
    @Test func samplesAreScaledAndAFreshValueIsReadEachTime() throws {
        let fake = try FakeIIODevices()
        defer { fake.root.remove() }
        let folder = try fake.device(2, name: "adxl345", raw: (10, -20, 256), scale: "0.038300")
        try fake.write(folder + "/in_accel_z_scale", "0.04")
        try fake.write(folder + "/in_accel_offset", "1")
        let source = try IIOAccelerometer(device: "adxl345", threshold: 0.5, sampleInterval: 0.2, devices: fake.devices)
        let first = try source.readAcceleration()
        #expect(abs(first.x - 11 * 0.0383) < 1e-9 && abs(first.y - -19 * 0.0383) < 1e-9 && abs(first.z - 257 * 0.04) < 1e-9)
        try fake.set(folder, (100, 0, 256))
        #expect(abs(try source.readAcceleration().x - 101 * 0.0383) < 1e-9)
        try fake.write(folder + "/in_accel_y_raw", "busy")
        #expect {
            _ = try source.readAcceleration()
        } throws: { error in
            (error as? MotionSourceError)?.description == "motion IIO iio:device2 (adxl345): in_accel_y_raw reads 'busy', not a number"
        }
        try fake.write(folder + "/in_accel_scale", "0")
        try fake.write(folder + "/in_accel_y_raw", "0")
        #expect(throws: MotionSourceError.self) {
            _ = try IIOAccelerometer(device: "adxl345", threshold: 0.5, sampleInterval: 0.2, devices: fake.devices)
        }
    }

    /// The watcher samples the accelerometer on its thread: a still sensor gives no hint, a jolt gives one, and
    /// a stop ends the watch at once.
    @Test func aWatchedAccelerometerHintsAtAJolt() throws {
        let fake = try FakeIIODevices()
        defer { fake.root.remove() }
        let folder = try fake.device(0, name: "mpu6050", raw: (0, 0, 16384), scale: "0.000598")
        let source = try IIOAccelerometer(device: "mpu6050", threshold: 0.5, sampleInterval: 0.02, devices: fake.devices)
        let hints = Atomic<Int>(0)
        let watcher = MotionWatcher(MotionSetup(source: source, debounce: 0)) { hints.add(1, ordering: .relaxed) }
        #expect(watcher.start())
        sleepSeconds(0.3)
        #expect(hints.load(ordering: .relaxed) == 0, "still")
        try fake.set(folder, (4000, 0, 16384))  // 2.4 m/s² along x
        #expect(eventually { hints.load(ordering: .relaxed) >= 1 })
        expectStopsWithinASecond(watcher)
    }

    /// A failed sample now and then is no motion and no failure; `failuresTolerated` in a row end the watch,
    /// naming the file and why.
    @Test func aFailedSampleIsToleratedUntilTheyKeepFailing() throws {
        let fake = try FakeIIODevices()
        defer { fake.root.remove() }
        let folder = try fake.device(0, name: "lis3dh")
        let source = try IIOAccelerometer(device: "lis3dh", threshold: 0.5, sampleInterval: 0.2, devices: fake.devices)
        #expect(try source.readActivations() == 0)
        try fake.write(folder + "/in_accel_z_raw", "")
        for _ in 1..<IIOAccelerometer.failuresTolerated { #expect(try source.readActivations() == 0) }
        try fake.write(folder + "/in_accel_z_raw", "16384")
        #expect(try source.readActivations() == 0, "a good sample starts the count again")
        try fake.write(folder + "/in_accel_z_raw", "")
        for _ in 1..<IIOAccelerometer.failuresTolerated { #expect(try source.readActivations() == 0) }
        #expect {
            _ = try source.readActivations()
        } throws: { error in
            (error as? MotionSourceError)?.description
                == "motion IIO iio:device0 (lis3dh): in_accel_z_raw reads '', not a number (10 samples in a row)"
        }
    }

    @Test func anAccelerometerThatIsNotThereIsRefusedAtSetup() {
        var configuration = DaemonConfiguration()
        configuration.motionIIO = DaemonConfiguration.IIOMotionSettings(device: "lodestar-missing-accelerometer")
        #expect(throws: MotionSourceError.self) { _ = try DaemonSetup.motion(for: configuration) }
    }
}
