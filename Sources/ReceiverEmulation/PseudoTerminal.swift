import SystemInterface
import GPSD

#if canImport(Glibc)
import Glibc
#endif

/// A pty standing in for a receiver's serial port: gpsd opens `devicePath`; Lodestar writes the receiver's
/// bytes to the master side and a reader thread collects what gpsd sends to the "receiver" (probes, power
/// commands). That thread also keeps gpsd from stalling: gpsd waits for its writes to drain when it opens a
/// device, 2–3 s per open if nobody reads them.
public final class PseudoTerminal: @unchecked Sendable {
    public let devicePath: String
    /// `_IOW('T', 0x31, int)` and `_IOR('T', 0x30, unsigned int)`: function-like macros Swift cannot import.
    /// These encodings hold on x86, x86-64, ARM and ARM64 (asm-generic ioctl numbering), i.e. every Pi.
    static let setLock: UInt = 0x4004_5431
    static let getNumber: UInt = 0x8004_5430
    /// `FIONREAD` (`TIOCINQ`): bytes waiting in a tty's input queue.
    static let bytesWaiting: UInt = 0x541B

    private let lock = PThreadMutex()
    private var master: Int32
    /// Held open so the pty survives gpsd closing and reopening it (the kernel tears a pty down when the
    /// last slave descriptor closes).
    private var slave: Int32
    private var closing = false
    private var received: [UInt8] = []

    public init() throws(SystemError) {
        // /dev/ptmx with the two ioctls glibc's posix_openpt/unlockpt/ptsname wrap (grantpt is a no-op on
        // devpts); the libc wrappers are hidden from Swift's Glibc module.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw SystemError("open", "/dev/ptmx") }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(master, PseudoTerminal.setLock, &unlock) == 0,
            ioctl(master, PseudoTerminal.getNumber, &number) == 0
        else {
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
        // gpsd drops root for its own user before it opens devices (docs/gpsd.md §4).
        chmod(path, 0o666)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        self.master = master
        self.slave = slave
        devicePath = path
        let started = DetachedThread.start { [self] in readUntilClosed() }
        if !started {
            Glibc.close(master)
            Glibc.close(slave)
            throw SystemError("pthread_create", "pty reader", code: EAGAIN)
        }
    }

    /// Closes both sides: to gpsd this is the receiver being unplugged. Returns once the pty is closed.
    /// Call it when done: the reader thread keeps the pty (and itself) alive until then.
    public func close() {
        lock.withLock { closing = true }
        while lock.withLock({ master >= 0 }) { sleepSeconds(0.005) }
    }

    public var isClosed: Bool { lock.withLock { master < 0 } }

    /// Writes `bytes` as the receiver. Returns false if the pty is closed or `deadline` (monotonic seconds)
    /// passes first.
    @discardableResult
    public func write(_ bytes: [UInt8], deadline: Double = .infinity) -> Bool {
        var offset = 0
        return bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return true }
            while offset < buffer.count {
                guard monotonicSeconds() < deadline else { return false }
                let result: Int? = lock.withLock {
                    guard !closing, master >= 0 else { return nil }
                    return Glibc.write(master, base + offset, buffer.count - offset)
                }
                guard let written = result else { return false }
                if written > 0 {
                    offset += written
                } else if written < 0 && errno != EAGAIN && errno != EINTR {
                    return false
                } else {
                    waitWritable()
                }
            }
            return true
        }
    }

    /// Bytes written as the receiver that the device side (gpsd) has not read yet.
    public var unreadByteCount: Int {
        lock.withLock {
            guard slave >= 0 else { return 0 }
            var count: Int32 = 0
            return ioctl(slave, PseudoTerminal.bytesWaiting, &count) == 0 ? Int(count) : 0
        }
    }

    /// Waits until gpsd has read every byte written so far (the kernel buffers up to 64 KiB, so a write
    /// returning says nothing about gpsd having seen it). The queue must stay empty for `quiet` seconds:
    /// written bytes reach the slave's queue through a kernel work item, so an empty queue right after a
    /// write can still mean "not arrived yet". False if `timeout` seconds pass first.
    public func waitUntilRead(timeout: Double = 10, quiet: Double = 0.1) -> Bool {
        let deadline = monotonicSeconds() + timeout
        var emptySince: Double?
        while true {
            let now = monotonicSeconds()
            if unreadByteCount > 0 {
                emptySince = nil
            } else if let since = emptySince {
                if now - since >= quiet { return true }
            } else {
                emptySince = now
            }
            if now > deadline || isClosed { return false }
            sleepSeconds(0.005)
        }
    }

    /// Everything gpsd has written to the receiver since the pty was made.
    public var bytesFromHost: [UInt8] { lock.withLock { received } }

    /// What gpsd wrote after the first `offset` bytes: for a reader that keeps its place.
    public func bytesFromHost(from offset: Int) -> [UInt8] {
        lock.withLock { offset < received.count ? Array(received[max(0, offset)...]) : [] }
    }

    private func waitWritable() {
        let descriptor = lock.withLock { master }
        guard descriptor >= 0 else { return }
        var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        _ = poll(&poller, 1, 50)
    }

    /// The reader thread: collects gpsd's writes; closes the descriptors when asked, so no other thread
    /// ever uses a closed (or reused) descriptor number.
    private func readUntilClosed() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let descriptor: Int32 = lock.withLock {
                if closing {
                    Glibc.close(master)
                    Glibc.close(slave)
                    master = -1
                    slave = -1
                }
                return master
            }
            guard descriptor >= 0 else { return }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0, poller.revents & Int16(POLLIN) != 0 else { continue }
            lock.withLock {
                guard !closing else { return }
                let count = chunk.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
                if count > 0 { received.append(contentsOf: chunk[0..<count]) }
            }
        }
    }
}
