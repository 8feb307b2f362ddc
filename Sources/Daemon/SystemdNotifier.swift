#if canImport(Glibc)
import Glibc
#endif
import GPSModel
import Policy
import SystemInterface

/// Why a notification did not reach systemd. A service keeps running when notifying fails: the caller logs it.
public struct NotifyFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// NOTIFY_SOCKET as given.
    public var socket: String
    public var reason: String

    public var description: String { "notifying systemd at \(socket): \(reason)" }
}

/// sd_notify(3) by hand, without libsystemd: each message is one datagram on an AF_UNIX socket to the address
/// in NOTIFY_SOCKET (a path, or `@name` in the abstract namespace). Without NOTIFY_SOCKET (not started by
/// systemd, or a unit that is not Type=notify) every call does nothing.
///
/// The environment is read once, at `init`, and never unset: a reload may notify again. Each call opens its
/// own socket, as sd_notify does, so the notifier holds nothing and can be called from any thread.
public struct SystemdNotifier: Sendable {
    /// Where datagrams go, nil when there is no NOTIFY_SOCKET.
    public let socketAddress: String?
    /// Seconds between WATCHDOG=1 pings, half of WATCHDOG_USEC as sd_watchdog_enabled(3) advises; nil when the
    /// unit has no watchdog, or the watchdog is meant for another process (WATCHDOG_PID).
    public let watchdogInterval: Double?

    /// Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID from `environment`; `processID` is this process's
    /// (the watchdog is ours only if WATCHDOG_PID is unset or names it).
    public init(environment: [String: String], processID: Int32 = getpid()) {
        let socket = environment["NOTIFY_SOCKET"] ?? ""
        socketAddress = socket.isEmpty ? nil : socket
        var interval: Double?
        if let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 {
            let pidMatches = environment["WATCHDOG_PID"].map { Int32($0) == processID } ?? true
            if pidMatches { interval = Double(microseconds) / 2 / 1_000_000 }
        }
        watchdogInterval = interval
    }

    /// The variables the notifier reads, from this process's environment.
    public static func processEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }

    /// Whether notifications go anywhere.
    public var isEnabled: Bool { socketAddress != nil }

    /// Start-up is done (and, after RELOADING=1, the reload is done); `status` goes in the same datagram.
    @discardableResult
    public func ready(status: String? = nil) -> NotifyFailure? {
        send("READY=1" + (status.map { "\nSTATUS=" + Self.oneLine($0) } ?? ""))
    }

    /// The line `systemctl status` shows under the unit.
    @discardableResult
    public func status(_ text: String) -> NotifyFailure? {
        send("STATUS=" + Self.oneLine(text))
    }

    /// The service is alive: due every `watchdogInterval` seconds.
    @discardableResult
    public func watchdog() -> NotifyFailure? {
        send("WATCHDOG=1")
    }

    /// A reload (SIGHUP) begins; READY=1 ends it. `monotonicSeconds` is CLOCK_MONOTONIC now: Type=notify-reload
    /// (systemd 253 and later) wants MONOTONIC_USEC with RELOADING=1 to tell this reload from an earlier one;
    /// older systemd ignores it.
    @discardableResult
    public func reloading(monotonicSeconds now: Double = monotonicSeconds()) -> NotifyFailure? {
        send("RELOADING=1\nMONOTONIC_USEC=\(UInt64(max(0, now) * 1_000_000))")
    }

    /// Shutting down.
    @discardableResult
    public func stopping() -> NotifyFailure? {
        send("STOPPING=1")
    }

    /// Sends `message` as one datagram; nil when it was sent or there is nowhere to send it.
    @discardableResult
    public func send(_ message: String) -> NotifyFailure? {
        guard let socketAddress else { return nil }
        func failure(_ reason: String) -> NotifyFailure { NotifyFailure(socket: socketAddress, reason: reason) }
        guard socketAddress.hasPrefix("/") || socketAddress.hasPrefix("@") else {
            // systemd 254 also passes vsock: addresses (to a VM's host); a Pi's service never gets one.
            return failure("not a Unix socket path or @abstract name")
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return failure(SystemError("socket", "AF_UNIX").description) }
        defer { close(descriptor) }
        let bytes = Array(message.utf8)
        let sent: Int
        do throws(SystemError) {
            sent = try withUnixSocketAddress(socketAddress) { address, length in
                bytes.withUnsafeBytes { buffer in
                    retryingOnInterrupt {
                        // Never blocks: a manager that stopped reading its socket must not hold up the track
                        // (a full queue is EAGAIN, logged once like any failed notification).
                        sendto(
                            descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT),
                            address, length)
                    }
                }
            }
        } catch {
            return failure("the address is longer than a Unix socket address holds (\(error.reason))")
        }
        if sent < 0 { return failure(SystemError("sendto", socketAddress).description) }
        if sent != bytes.count { return failure("sent \(sent) of \(bytes.count) bytes") }
        return nil
    }

    /// STATUS= holds one line: a newline would start another assignment.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}

extension DaemonStatus {
    /// The STATUS= line: regime and why, the age of the last fix, and the saving so far.
    /// `standby (stopped for 5 min); last fix 12 s ago; 0.42 mAh against 1.73 mAh always on (76 % saved)`.
    public func systemdStatusLine(now: UTCTime) -> String {
        let reason = regimeReason.isEmpty ? "" : " (\(regimeReason))"
        let fix = lastFix.map { "last fix " + StatusText.ago(now.interval(since: $0)) } ?? "no fix yet"
        let energy = EnergyLedger.summary(charge: chargeMilliampHours, alwaysOn: alwaysOnMilliampHours)
        return "\(regime.rawValue)\(reason); \(fix); \(energy)"
    }
}
