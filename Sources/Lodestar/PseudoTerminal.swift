#if canImport(Glibc)
import Glibc
#endif

/// A pty standing in for a receiver's serial port: gpsd opens `devicePath`; Lodestar writes the receiver's
/// bytes to the master side and reads back what gpsd sends to the "receiver" (probes, power commands).
public final class PseudoTerminal: @unchecked Sendable {
    public let devicePath: String
    /// `_IOW('T', 0x31, int)` and `_IOR('T', 0x30, unsigned int)`: function-like macros Swift cannot import.
    /// These encodings hold on x86, x86-64, ARM and ARM64 (asm-generic ioctl numbering), i.e. every Pi.
    static let setLock: UInt = 0x4004_5431
    static let getNumber: UInt = 0x8004_5430
    private var master: Int32
    /// Held open so the pty survives gpsd closing and reopening it (the kernel tears a pty down when the
    /// last slave descriptor closes).
    private var slave: Int32
    private var received: [UInt8] = []
    private let lock = PThreadMutex()

    public init() throws(SystemError) {
        // /dev/ptmx with the two ioctls glibc's posix_openpt/unlockpt/ptsname wrap (grantpt is a no-op on
        // devpts); the libc wrappers are hidden from Swift's Glibc module.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw SystemError("open", "/dev/ptmx") }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(master, PseudoTerminal.setLock, &unlock) == 0, ioctl(master, PseudoTerminal.getNumber, &number) == 0 else {
            let error = SystemError("ioctl", "/dev/ptmx")
            Glibc.close(master)
            throw error
        }
        let path = "/dev/pts/\(number)"
        let slave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else {
            let error = SystemError("open", path)
            Glibc.close(master)
            throw error
        }
        // Raw: no echo (gpsd's probes would bounce back as "receiver" data) and no line discipline.
        var attributes = termios()
        tcgetattr(slave, &attributes)
        cfmakeraw(&attributes)
        tcsetattr(slave, TCSANOW, &attributes)
        // gpsd drops root for its own user before it opens devices (gpsd.md §6, 12).
        chmod(path, 0o666)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        self.master = master
        self.slave = slave
        devicePath = path
    }

    deinit { close() }

    /// Closes both sides: to gpsd this is the receiver being unplugged.
    public func close() {
        lock.withLock {
            if master >= 0 { Glibc.close(master) }
            if slave >= 0 { Glibc.close(slave) }
            master = -1
            slave = -1
        }
    }

    /// Writes `bytes` as the receiver, reading whatever gpsd writes meanwhile so neither side stalls.
    /// Returns false if the pty is closed or `deadline` (monotonic seconds) passes first.
    @discardableResult
    public func write(_ bytes: [UInt8], deadline: Double = .infinity) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let descriptor = lock.withLock { master }
            guard descriptor >= 0, monotonicSeconds() < deadline else { return false }
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT | POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready < 0 && errno != EINTR { return false }
            if poller.revents & Int16(POLLIN) != 0 { drain() }
            if poller.revents & Int16(POLLOUT) != 0 {
                let written = bytes.withUnsafeBytes { buffer in
                    Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                }
                if written > 0 {
                    offset += written
                } else if written < 0 && errno != EAGAIN && errno != EINTR {
                    return false
                }
            }
        }
        return true
    }

    /// Reads what gpsd has written to the receiver so far (non-blocking).
    public func drain() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let descriptor = lock.withLock { master }
            guard descriptor >= 0 else { return }
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            lock.withLock { received.append(contentsOf: chunk[0..<count]) }
        }
    }

    /// Everything gpsd has written to the receiver since the pty was made.
    public var bytesFromHost: [UInt8] {
        drain()
        return lock.withLock { received }
    }
}

/// A plain pthread mutex: the runtime's types that are shared with a feeder thread use it.
final class PThreadMutex: @unchecked Sendable {
    private var mutex = pthread_mutex_t()

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}
