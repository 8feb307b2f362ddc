import SystemInterface
import GPSD
import GPSModel

#if canImport(Glibc)
import Glibc
#endif

/// A gpsd of our own: started on a free loopback port with no device, a control socket and a shared-memory
/// key of its own, so it never meets the system's gpsd or another test's. Used by `lodestar demo` and by the
/// gpsd-in-the-loop tests (docs/gpsd.md §4).
public final class PrivateGPSD: @unchecked Sendable {
    public struct Options: Sendable {
        /// `-b`: gpsd never writes to devices (no probes, no power commands reach the receiver).
        public var readOnly = false
        /// `-p`: gpsd does not reconfigure receivers (no switch of a u-blox to binary).
        public var passive = false
        /// Fixed speed and framing (`-s`, `-f 8N1`): no autobaud hunt, so data is read from the first byte.
        public var speed = 38_400
        /// A port to use instead of a free one (to restart gpsd where clients expect it).
        public var port: UInt16?
        public var debugLevel = 1

        public init() {}
    }

    public let port: UInt16
    public let options: Options
    public let controlSocketPath: String
    public let logPath: String
    public let sharedMemoryKey: Int32
    private let folder: String
    private let process: ChildProcess

    /// The failures a private gpsd can meet, in words that say what to do.
    public enum StartError: Error, CustomStringConvertible {
        case gpsdNotInstalled
        case system(SystemError)
        case didNotStart(reason: String, log: String)
        case controlCommandFailed(command: String, reply: String)
        /// `attempts`: what happened with each gpsd tried, in order (`addDeviceAndWait`'s steps, timed).
        case deviceNotActivated(path: String, attempts: [String], log: String)

        public var description: String {
            switch self {
            case .gpsdNotInstalled:
                return "gpsd is not installed (Debian: sudo apt-get install gpsd gpsd-clients)"
            case .system(let error):
                return error.description
            case .didNotStart(let reason, let log):
                return "private gpsd did not start: \(reason)\n\(log)"
            case .controlCommandFailed(let command, let reply):
                return "gpsd refused control command \(command): \(reply)"
            case .deviceNotActivated(let path, let attempts, let log):
                let tried = attempts.enumerated().map { "gpsd \($0.offset + 1): \($0.element)\n" }.joined()
                return "gpsd did not activate \(path)\n\(tried)\(log)"
            }
        }
    }

    public init(options: Options = Options()) throws(StartError) {
        guard let gpsd = findExecutable("gpsd") else { throw .gpsdNotInstalled }
        self.options = options
        var template = Array("/tmp/lodestar-gpsd-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw .system(SystemError("mkdtemp", "/tmp/lodestar-gpsd-XXXXXX"))
        }
        folder = String(cString: made)
        // gpsd gives up root after start; its log and socket stay in a folder it can still reach.
        chmod(folder, 0o755)
        controlSocketPath = folder + "/control.sock"
        logPath = folder + "/gpsd.log"
        do throws(SystemError) {
            if let fixed = options.port { port = fixed } else { port = try freeLoopbackPort() }
        } catch {
            rmdir(folder)
            throw .system(error)
        }
        // gpsd exports fixes to a SysV segment whose key would collide between instances; one per port.
        sharedMemoryKey = Int32(bitPattern: 0x4C53_0000 | UInt32(port))
        var arguments = ["-N", "-n", "-S", String(port), "-F", controlSocketPath, "-s", String(options.speed),
                         "-f", "8N1", "-D", String(options.debugLevel)]
        if options.readOnly { arguments.append("-b") }
        if options.passive { arguments.append("-p") }
        do {
            process = try ChildProcess(
                executable: gpsd, arguments: arguments,
                environment: ["GPSD_SHM_KEY": "0x" + String(UInt32(bitPattern: sharedMemoryKey), radix: 16)],
                standardError: logPath)
        } catch {
            rmdir(folder)
            throw .system(error)
        }
        let deadline = monotonicSeconds() + 10
        while access(controlSocketPath, F_OK) != 0 || !canConnect(port: port) {
            if !process.isRunning || monotonicSeconds() > deadline {
                let log = self.log
                stop()
                throw .didNotStart(reason: "no control socket or port \(port) after 10 s", log: log)
            }
            sleepSeconds(0.02)
        }
    }

    deinit { stop() }

    public var isRunning: Bool { process.isRunning }

    /// gpsd's own log (debug level from the options).
    public var log: String {
        readFile(logPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Stops gpsd and removes its socket, log folder and shared-memory segment. Safe to call twice.
    public func stop() {
        // gpsd takes about 1.5 s to act on SIGTERM; a private gpsd has nothing to save, so it gets little grace.
        process.terminate(grace: 0.3)
        unlink(controlSocketPath)
        unlink(logPath)
        rmdir(folder)
        let segment = shmget(sharedMemoryKey, 0, 0)
        if segment >= 0 { shmctl(segment, IPC_RMID, nil) }
    }

    /// Kills gpsd without letting it clean up, as a crash or `kill -9` would.
    public func kill() {
        process.signal(SIGKILL)
        process.waitForExit(timeout: 5)
    }

    /// A new gpsd on this one's port, with its options and no device, as systemd restarts a gpsd that died:
    /// its clients reconnect to it where they were. Stops this one first if it still runs. A port the kernel
    /// does not let go of at once is tried again for up to `timeout` seconds.
    public func successor(timeout: Double = 10) throws(StartError) -> PrivateGPSD {
        stop()
        var options = self.options
        options.port = port
        let deadline = monotonicSeconds() + timeout
        while true {
            do {
                return try PrivateGPSD(options: options)
            } catch {
                guard case .didNotStart = error, monotonicSeconds() < deadline else { throw error }
                sleepSeconds(0.1)
            }
        }
    }

    /// Adds a device through the control socket (`+PATH`).
    public func addDevice(_ path: String) throws(StartError) {
        try control("+" + path)
    }

    /// Removes a device through the control socket (`-PATH`): gpsd closes it and tells its watchers.
    public func removeDevice(_ path: String) throws(StartError) {
        try control("-" + path)
    }

    /// Adds the pty as a device and returns once gpsd is demonstrably reading it, so that no byte of what
    /// is fed next is lost. gpsd flushes a tty when it opens it and while it settles the line, so waiting for
    /// the activation notice plus a fixed delay (gpsfake's approach) loses data on a loaded machine. Instead
    /// a primer sentence that carries no fix (`$GPTXT`) is written every 50 ms until gpsd reports the
    /// device's driver, which it only does after decoding a packet from it.
    ///
    /// gpsd reads a control-socket connection until its client closes it, and serves nothing else meanwhile.
    /// Before `ChildProcess` closed what children inherit, a connection another test's child had inherited
    /// held gpsd so: it accepted the device, then announced nothing and answered nothing. For a gpsd merely
    /// slow under load, after `attemptTimeout` without the notice the device is removed and added again; a
    /// failure lists what happened when. A device gpsd has announced is waited for until `timeout`: gpsd is
    /// then only slow to read the primer (a starved machine), and adding it again would start the open and
    /// the settling over. A control command left unanswered within its 5 s is asked again too, and the ERROR
    /// gpsd then gives for a device it already has is taken as the first request having worked.
    public func addDeviceAndWait(
        _ terminal: PseudoTerminal, timeout: Double = 45, attemptTimeout: Double = 15
    ) throws(StartError) {
        let path = terminal.devicePath
        let watcher: GPSDSession
        do {
            watcher = try GPSDSession(host: "127.0.0.1", port: String(port))
            try watcher.watch()
        } catch {
            throw .didNotStart(reason: error.description, log: log)
        }
        let started = monotonicSeconds()
        let deadline = started + timeout
        // What happened, with times from the start, for a failure to show: gpsd's log at its default level
        // says nothing about a device it was asked for.
        var history: [String] = []
        func note(_ event: String) {
            let seconds = Int(((monotonicSeconds() - started) * 10).rounded())
            history.append("\(seconds / 10).\(seconds % 10) s \(event)")
        }
        var askedWithoutAnswer = false
        while monotonicSeconds() < deadline {
            do {
                note("+\(path)")
                try addDevice(path)
                note("OK")
            } catch {
                guard case .controlCommandFailed(_, let reply) = error else { throw error }
                if reply.isEmpty {
                    // No answer in time (a CI machine running many gpsds at once): ask again while time is left.
                    note("no answer")
                    askedWithoutAnswer = true
                    continue
                }
                note(reply)
                // gpsd answers ERROR to `+PATH` for a device it already has: the unanswered request took
                // effect, so wait for the device like any other. An ERROR to a first request is a real refusal.
                guard askedWithoutAnswer else { throw error }
            }
            let attemptDeadline = min(deadline, monotonicSeconds() + attemptTimeout)
            var active = false
            var lastPrimer = 0.0
            while monotonicSeconds() < (active ? deadline : attemptDeadline) {
                if active, monotonicSeconds() - lastPrimer >= 0.05 {
                    terminal.write(PrivateGPSD.primer, deadline: deadline)
                    lastPrimer = monotonicSeconds()
                }
                guard case .report(let report)? = try? watcher.read(timeoutMicroseconds: 20_000) else { continue }
                switch report {
                case .device(let device) where device.path == path && device.isActive:
                    if device.driver != nil { return }
                    if !active { note("announced") }
                    active = true
                case .devices(let devices) where devices.contains(where: { $0.path == path && $0.isActive }):
                    if !active { note("listed active") }
                    active = true
                default:
                    continue
                }
            }
            // Not announced: try once more from a clean slate.
            note(active ? "no driver yet" : "not announced")
            try? removeDevice(path)
        }
        throw .deviceNotActivated(path: path, attempts: ["\(path): " + history.joined(separator: ", ")], log: log)
    }

    /// A gpsd reading the pty of a device `makeDevice` makes (a bare pty, an emulated receiver), its device
    /// activated. A gpsd that does not activate its pty in time (`addDeviceAndWait`) is replaced with a fresh
    /// gpsd and a fresh device, `attempts` times in all; `discard` ends a device given up on.
    public static func startReading<Device>(
        options: Options = Options(), attempts: Int = 3, _ makeDevice: () throws -> Device,
        terminal: (Device) -> PseudoTerminal?, discard: (Device) -> Void
    ) throws -> (gpsd: PrivateGPSD, device: Device) {
        var attempt = 1
        var earlier: [String] = []
        while true {
            let device = try makeDevice()
            guard let pty = terminal(device) else {
                discard(device)
                throw StartError.deviceNotActivated(path: "", attempts: [], log: "the device has no pty")
            }
            let gpsd: PrivateGPSD
            do {
                gpsd = try PrivateGPSD(options: options)
            } catch {
                discard(device)
                throw error
            }
            do {
                try gpsd.addDeviceAndWait(pty)
                return (gpsd, device)
            } catch {
                gpsd.stop()
                discard(device)
                guard case .deviceNotActivated(let path, let tried, let log) = error else { throw error }
                earlier += tried
                guard attempt < attempts else {
                    throw StartError.deviceNotActivated(path: path, attempts: earlier, log: log)
                }
                attempt += 1
            }
        }
    }

    /// `$GPTXT,01,01,02,lodestar primer*hh`: an NMEA text message; gpsd identifies an NMEA device from it and
    /// derives no fix from it.
    static let primer: [UInt8] = {
        let body = Array("GPTXT,01,01,02,lodestar primer".utf8)
        let checksum = body.reduce(UInt8(0)) { $0 ^ $1 }
        let hex = String(checksum, radix: 16, uppercase: true)
        return Array(("$" + String(decoding: body, as: UTF8.self) + "*" + (hex.count < 2 ? "0" : "") + hex + "\r\n").utf8)
    }()

    /// Sends one control-socket command; gpsd 3.22 answers `OK`, 3.23+ `{"class":"ACK"}`.
    private func control(_ command: String) throws(StartError) {
        let reply: String
        do {
            reply = try controlSocketExchange(path: controlSocketPath, command: command + "\n")
        } catch {
            throw .system(error)
        }
        guard reply.hasPrefix("OK") || reply.contains("\"ACK\"") else {
            throw .controlCommandFailed(command: command, reply: reply)
        }
    }
}

/// A port the kernel says is free on 127.0.0.1 now (bind to 0, read it back, close): nothing listens on it.
public func freeLoopbackPort() throws(SystemError) -> UInt16 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw SystemError("socket", "AF_INET") }
    defer { close(descriptor) }
    guard withLoopbackAddress(port: 0, { bind(descriptor, $0, $1) }) == 0 else { throw SystemError("bind", "127.0.0.1:0") }
    guard let port = boundPort(of: descriptor) else { throw SystemError("getsockname", "127.0.0.1") }
    return port
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
public func canConnect(port: UInt16) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    return withLoopbackAddress(port: port) { connect(descriptor, $0, $1) } == 0
}

/// One command on a gpsd control socket and its one-line reply. gpsd reads the connection until it is
/// closed, serving nothing else meanwhile: it is closed once the reply is in, and no child inherits it.
func controlSocketExchange(path: String, command: String, timeout: Double = 5) throws(SystemError) -> String {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw SystemError("socket", "AF_UNIX") }
    defer { close(descriptor) }
    let connected = try withUnixSocketAddress(path) { connect(descriptor, $0, $1) }
    guard connected == 0 else { throw SystemError("connect", path) }
    let sent = Array(command.utf8).withUnsafeBytes { writeAll(descriptor, $0) }
    guard sent else { throw SystemError("write", path) }
    var reply: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 512)
    let deadline = monotonicSeconds() + timeout
    while !reply.contains(0x0A), monotonicSeconds() < deadline {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 100) > 0 else { continue }
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        reply.append(contentsOf: chunk[0..<count])
    }
    return String(decoding: reply, as: UTF8.self).trimmingTrailingNewlines()
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last == "\n" || last == "\r" { text = text.dropLast() }
        return String(text)
    }
}
