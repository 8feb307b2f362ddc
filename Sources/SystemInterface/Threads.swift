#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Monotonic seconds, for timeouts, pacing and epoch quiet times (never the wall clock: it jumps).
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// A one-way flag shared between the consumer and the reader thread.
public final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    public init() {}
    public func set() { value.store(true, ordering: .releasing) }
    public var isSet: Bool { value.load(ordering: .acquiring) }
}

/// A detached POSIX thread: libgps sessions block in `select`, which must not tie up Swift's cooperative pool.
public enum DetachedThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let box = Unmanaged<Box>.fromOpaque(argument).takeRetainedValue()
            box.body()
            return nil
        }, box)
        if status != 0 {
            Unmanaged<Box>.fromOpaque(box).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}

/// A plain pthread mutex: the runtime's types shared with a feeder or reader thread use it.
public final class PThreadMutex: @unchecked Sendable {
    private var mutex = pthread_mutex_t()

    public init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}

/// A wake-up for a thread that polls: any thread `signal`s, the waiting thread polls `descriptor` (alone with
/// `wait`, or beside its own descriptors) and `drain`s it. A byte in a non-blocking pipe, so a signal never
/// blocks and a poll on the monotonic clock is all the waiting there is. Without a pipe (none could be made)
/// `descriptor` is -1 and waits poll in slices.
public final class WakeUpPipe: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    /// Bytes written or about to be (counted before the write, uncounted if it fails), and bytes read by
    /// `drain` (one draining thread). Equal, the pipe is empty: `drain` skips the read.
    private let bytesSent = Atomic<Int>(0)
    private let bytesRead = Atomic<Int>(0)

    public init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// What the waiting thread polls for input; -1 without a pipe.
    public var descriptor: Int32 { readEnd }

    public func signal() {
        guard writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        // Counted first: the poller wakes as the byte lands, and its drain must see the count then (counted
        // after the write, the drain skipped it and the next poll returned at once: a loop for nothing).
        bytesSent.add(1, ordering: .sequentiallyConsistent)
        // A full pipe (EAGAIN) already holds a wake-up: nothing is lost.
        if retryingOnInterrupt({ write(writeEnd, &byte, 1) }) != 1 {
            bytesSent.subtract(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Empties the pipe. Reads only when a byte was sent since the last drain: a reader that drains after
    /// every gpsd report read an empty pipe (EAGAIN) twice per report, the daemon's most frequent system call.
    /// A byte still on its way (counted, not yet written) is read by a later drain: its poll wakes for it. A
    /// short read is an empty pipe: no second read to find it so.
    public func drain() {
        guard readEnd >= 0,
            bytesSent.load(ordering: .sequentiallyConsistent) != bytesRead.load(ordering: .sequentiallyConsistent)
        else { return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { bytes in
            while true {
                let count = read(readEnd, bytes.baseAddress, bytes.count)
                if count > 0 { bytesRead.add(count, ordering: .sequentiallyConsistent) }
                if count == bytes.count || (count < 0 && errno == EINTR) { continue }
                break
            }
        }
    }

    /// Waits until signalled or `seconds` pass (nil: no limit), then drains. May return early.
    public func wait(seconds: Double?) {
        guard readEnd >= 0 else {
            sleepSeconds(min(seconds ?? 0.05, 0.05))
            return
        }
        // Rounded up, so a timer is not woken for a millisecond early and spun on.
        let milliseconds: Int32 =
            if let seconds { Int32(min(max((seconds * 1000).rounded(.up), 0), 3_600_000)) } else { -1 }
        var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        _ = retryingOnInterrupt { poll(&poller, 1, milliseconds) }
        drain()
    }
}
