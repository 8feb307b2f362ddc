@testable import Daemon
import Foundation
import GPSModel
import Policy
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A datagram socket bound where systemd's would be: a path, or a name in the abstract namespace (`@name`).
private final class NotifySocket {
    let address: String
    private let descriptor: Int32
    private let folder: String?

    init(abstract: Bool) throws {
        let tag = "lodestar-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        if abstract {
            folder = nil
            address = "@" + tag
        } else {
            let folder = NSTemporaryDirectory() + tag
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            self.folder = folder
            address = folder + "/notify"
        }
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(descriptor >= 0)
        // Built here by hand, not with withUnixSocketAddress, so the notifier's abstract addresses are checked
        // against an encoding of their own.
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(2 + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        try #require(bound == 0, "bind \(address): errno \(errno)")
        // A test that sends nothing must not hang.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// The next datagram's bytes, nil after 5 s without one.
    func receive() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count >= 0 ? Array(buffer[0..<count]) : nil
    }

    /// Whether a datagram is waiting.
    var hasPending: Bool {
        var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&pollDescriptor, 1, 0) == 1
    }
}

@Suite struct SystemdNotifierTests {
    @Test(arguments: [false, true])
    func messagesArriveByteForByte(abstract: Bool) throws {
        let socket = try NotifySocket(abstract: abstract)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        #expect(notifier.isEnabled)
        #expect(notifier.ready(status: "starting\nreceiver") == nil)
        #expect(socket.receive() == Array("READY=1\nSTATUS=starting receiver".utf8))
        #expect(notifier.ready() == nil)
        #expect(socket.receive() == Array("READY=1".utf8))
        #expect(notifier.status("standby (stopped); last fix 12 s ago") == nil)
        #expect(socket.receive() == Array("STATUS=standby (stopped); last fix 12 s ago".utf8))
        #expect(notifier.watchdog() == nil)
        #expect(socket.receive() == Array("WATCHDOG=1".utf8))
        #expect(notifier.reloading(monotonicSeconds: 1234.5678901) == nil)
        #expect(socket.receive() == Array("RELOADING=1\nMONOTONIC_USEC=1234567890".utf8))
        #expect(notifier.stopping() == nil)
        #expect(socket.receive() == Array("STOPPING=1".utf8))
        #expect(!socket.hasPending)
    }

    @Test func withoutNotifySocketEveryCallDoesNothing() {
        let notifier = SystemdNotifier(environment: ["WATCHDOG_USEC": "20000000"])
        #expect(!notifier.isEnabled)
        #expect(notifier.ready(status: "x") == nil)
        #expect(notifier.watchdog() == nil)
        #expect(notifier.stopping() == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]).isEnabled == false)
    }

    @Test func aSocketNobodyListensOnIsAFailureReturned() throws {
        let folder = NSTemporaryDirectory() + "lodestar-notify-none-\(UUID().uuidString)"
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": folder + "/notify"])
        let failure = try #require(notifier.ready())
        #expect(failure.socket == folder + "/notify")
        #expect(failure.description.contains("sendto"), "\(failure)")
        #expect(failure.description.contains("No such file"), "\(failure)")
    }

    @Test func anAddressThatIsNotAUnixSocketIsAFailureReturned() throws {
        let vsock = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": "vsock:2:1234"]).watchdog())
        #expect(vsock.reason.contains("not a Unix socket path"))
        let long = "/" + String(repeating: "x", count: 200)
        let tooLong = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": long]).watchdog())
        #expect(tooLong.reason.contains("longer than"))
    }

    @Test func watchdogIntervalIsHalfOfWatchdogUsec() {
        let own = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "30000000"], processID: 42)
        #expect(own.watchdogInterval == 15)
        let named = SystemdNotifier(
            environment: ["NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "5000000", "WATCHDOG_PID": "42"], processID: 42)
        #expect(named.watchdogInterval == 2.5)
    }

    @Test func watchdogForAnotherProcessOrMalformedIsOff() {
        let other = SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "41"], processID: 42)
        #expect(other.watchdogInterval == nil)
        for value in ["0", "-5", "soon", ""] {
            #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": value], processID: 42).watchdogInterval == nil)
        }
        #expect(SystemdNotifier(environment: [:]).watchdogInterval == nil)
    }

    @Test func processEnvironmentReadsOnlyTheNotifyVariables() {
        let environment = SystemdNotifier.processEnvironment()
        #expect(Set(environment.keys).isSubset(of: ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"]))
    }

    @Test func statusLineSaysRegimeFixAgeAndSaving() {
        let start = UTCTime(seconds: 1_800_000_000)
        var status = DaemonStatus(
            pid: 1, started: start, updated: start, profile: "car", mechanism: "ubx", regime: .standby,
            regimeReason: "stopped for 5 min", chargeMilliampHours: 0.42, alwaysOnMilliampHours: 1.73)
        #expect(
            status.systemdStatusLine(now: start)
                == "standby (stopped for 5 min); no fix yet; 0.42 mAh against 1.73 mAh always on (76 % saved)")
        status.lastFix = UTCTime(seconds: 1_800_000_000 - 12)
        status.regimeReason = ""
        #expect(
            status.systemdStatusLine(now: start)
                == "standby; last fix 12 s ago; 0.42 mAh against 1.73 mAh always on (76 % saved)")
    }
}
