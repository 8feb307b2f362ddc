import GPIOLines
import SystemInterface

#if canImport(Glibc)
    import Glibc
#endif

/// Motion in an accelerometer's samples: a sample that differs from the recent average by more than
/// `threshold` (m/s²). The average follows gravity and the way the sensor is mounted, so a car parked on a
/// slope reads still, while a pull-away, a door or a bump shows as a change. A gap in the samples longer than
/// `maximumGap` (a suspended system) starts the average again rather than taking the gap for motion.
public struct AccelerationChange: Sendable, Equatable {
    /// m/s².
    public var threshold: Double
    /// Seconds for the average to take in a lasting change (a sensor tilted as the car is parked).
    public var averagingTime = 2.0
    public var maximumGap = 10.0
    private var average: SIMD3<Double>?
    private var last: Double?

    public init(threshold: Double) { self.threshold = threshold }

    /// Whether `acceleration` (m/s², each axis), read at `t` (monotonic seconds), is motion.
    public mutating func isMotion(_ acceleration: SIMD3<Double>, at t: Double) -> Bool {
        defer { last = t }
        guard let average, let last, t > last, t - last <= maximumGap else {
            average = acceleration
            return false
        }
        let change = acceleration - average
        self.average = average + min(1, (t - last) / averagingTime) * change
        return (change * change).sum().squareRoot() > threshold
    }
}

/// An accelerometer with a Linux IIO driver (an MPU-6050, ADXL345 or LIS3DH on I²C, `/sys/bus/iio/devices`),
/// sampled every `sampleInterval` seconds: a sample `AccelerationChange` calls motion is one activation.
///
/// Sampled rather than woken by the sensor's own motion interrupt: the common hobby accelerometers' drivers
/// give IIO no motion event (the interrupt pin itself can go to a GPIO line, `motion.gpio`), while every
/// accelerometer driver gives its raw channels and their scale (the kernel's sysfs-bus-iio ABI). Each sample
/// is three reads of files kept open; nothing else runs between samples.
public final class IIOAccelerometer: MotionEdgeSource, @unchecked Sendable {
    public static let devicesDirectory = "/sys/bus/iio/devices"

    /// `motion IIO iio:device0 (mpu6050)`.
    public let description: String
    public let sampleInterval: Double?
    /// The device's folder, `/sys/bus/iio/devices/iio:device0`.
    public let directory: String

    private struct Axis {
        var name: String
        var raw: FileDescriptor
        var scale: Double
        var offset: Double
    }

    // Read by the one watching thread only (`MotionWatcher`); the descriptors are closed in deinit.
    private let axes: [Axis]
    private var change: AccelerationChange
    private let now: @Sendable () -> Double

    /// `device`: the device's folder under `devices` (`iio:device0`), an absolute path to one, or the name its
    /// driver gives it (the folder's `name` file: `mpu6050`, `adxl345`).
    public init(
        device: String, threshold: Double, sampleInterval: Double, devices: String = devicesDirectory,
        now: @escaping @Sendable () -> Double = monotonicSeconds
    ) throws(MotionSourceError) {
        let directory = try Self.find(device, in: devices)
        let name = Self.text(directory + "/name")
        let folder = directory.split(separator: "/").last.map(String.init) ?? directory
        let description = "motion IIO \(folder)" + (name.map { " (\($0))" } ?? "")
        var axes: [Axis] = []
        // A failure closes what was opened before it.
        func abandon(_ message: String) -> MotionSourceError {
            for opened in axes { try? opened.raw.close() }
            return MotionSourceError("\(description): \(message)")
        }
        for axis in ["x", "y", "z"] {
            // A scale and offset per axis, or one for all (the ABI allows both).
            let scale = Self.number(directory, "in_accel_\(axis)_scale") ?? Self.number(directory, "in_accel_scale")
            guard let scale, scale > 0 else {
                throw abandon("no in_accel_\(axis)_scale or in_accel_scale with a positive number in \(directory)")
            }
            let offset = Self.number(directory, "in_accel_\(axis)_offset") ?? Self.number(directory, "in_accel_offset")
            let path = "\(directory)/in_accel_\(axis)_raw"
            do throws(Errno) {
                axes.append(Axis(name: axis, raw: try FileDescriptor.open(path, .readOnly), scale: scale, offset: offset ?? 0))
            } catch {
                throw abandon(
                    "cannot open \(path): \(error.rawValue == ENOENT ? "not an accelerometer's raw channel" : error.description)")
            }
        }
        (self.description, self.sampleInterval, self.directory, self.axes, self.now) =
            (description, sampleInterval, directory, axes, now)
        change = AccelerationChange(threshold: threshold)
    }

    deinit {
        for axis in axes { try? axis.raw.close() }
    }

    /// Nothing to wait on: `MotionWatcher` samples every `sampleInterval`.
    public var descriptor: Int32 { -1 }

    /// Failed samples in a row that end the watch: an I²C read fails now and then (a bus shared with a busy
    /// device, a loose wire), and one failure must not end the hints for good.
    public static let failuresTolerated = 10
    private var failures = 0

    /// Takes a sample: 1 when it is motion, 0 when not. A failed sample is 0 until `failuresTolerated` have
    /// failed in a row; that one throws.
    public func readActivations() throws(MotionSourceError) -> Int {
        let sample: SIMD3<Double>
        do throws(MotionSourceError) {
            sample = try readAcceleration()
        } catch {
            failures += 1
            if failures >= Self.failuresTolerated {
                throw MotionSourceError("\(error.description) (\(failures) samples in a row)")
            }
            return 0
        }
        failures = 0
        return change.isMotion(sample, at: now()) ? 1 : 0
    }

    /// An accelerometer has no level: the ignition is a GPIO line's (`motion.gpio.ignition`).
    public func readLevel() throws(MotionSourceError) -> Bool { false }

    /// The acceleration now, m/s² on each axis: (raw + offset) × scale.
    public func readAcceleration() throws(MotionSourceError) -> SIMD3<Double> {
        var values = SIMD3<Double>()
        var buffer = [UInt8](repeating: 0, count: 32)
        for (index, axis) in axes.enumerated() {
            // Each read of a sysfs attribute from offset 0 asks the driver for a fresh value.
            let count = buffer.withUnsafeMutableBytes { pread(axis.raw.rawValue, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                let why = count == 0 ? "it is empty" : Errno.current.description
                throw MotionSourceError("\(description): cannot read in_accel_\(axis.name)_raw: \(why)")
            }
            let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingWhitespace
            guard let raw = Double(text), raw.isFinite else {
                throw MotionSourceError("\(description): in_accel_\(axis.name)_raw reads '\(text)', not a number")
            }
            values[index] = (raw + axis.offset) * axis.scale
        }
        return values
    }

    /// The device's folder: `device` itself when it is a path, the folder of that name, or the one whose `name`
    /// file says it.
    static func find(_ device: String, in devices: String) throws(MotionSourceError) -> String {
        if device.hasPrefix("/") {
            guard isDirectory(device) else {
                throw MotionSourceError("motion.iio.device \(device): no such IIO device folder")
            }
            return device
        }
        if !device.contains("/"), isDirectory(devices + "/" + device) { return devices + "/" + device }
        let folders = directoryEntries(devices).filter { $0.hasPrefix("iio:device") }.sorted()
        if let folder = folders.first(where: { text("\(devices)/\($0)/name") == device }) {
            return devices + "/" + folder
        }
        let present = folders.map { folder in text("\(devices)/\(folder)/name").map { "\(folder) (\($0))" } ?? folder }
        throw MotionSourceError(
            "motion.iio.device \(device): no IIO device of that name in \(devices) ("
                + (present.isEmpty
                    ? "none there: is the driver loaded? an I²C accelerometer needs its device-tree overlay"
                    : "there: \(present.joined(separator: ", "))") + ")")
    }

    /// A sysfs attribute's text, without its newline; nil when it cannot be read.
    private static func text(_ path: String) -> String? {
        guard let bytes = readFile(path) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace
        return text.isEmpty ? nil : text
    }

    private static func number(_ directory: String, _ attribute: String) -> Double? {
        text(directory + "/" + attribute).flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil }
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        let bytes = Array(utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
