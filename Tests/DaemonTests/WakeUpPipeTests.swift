import Glibc
import SystemInterface
import Testing

/// The daemon's threads hand work to each other through `WakeUpPipe`: a signal must always wake the poller,
/// and a drain must leave nothing behind that would make the next poll return at once (a spinning thread).
@Suite struct WakeUpPipeTests {
    private func readable(_ pipe: WakeUpPipe, milliseconds: Int32 = 0) -> Bool {
        var poller = pollfd(fd: pipe.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, milliseconds) == 1
    }

    @Test func aSignalWakesAndADrainEmpties() {
        let pipe = WakeUpPipe()
        #expect(pipe.descriptor >= 0)
        #expect(!readable(pipe))
        pipe.drain()  // nothing signalled: nothing to read, nothing broken
        #expect(!readable(pipe))
        for _ in 0..<100 { pipe.signal() }
        #expect(readable(pipe))
        pipe.drain()
        #expect(!readable(pipe))
        pipe.signal()
        #expect(readable(pipe))
        pipe.drain()
        #expect(!readable(pipe))
    }

    /// Signals from another thread racing the drains: the poller is woken, and once the signaller is done one
    /// drain leaves the pipe empty.
    @Test func signalsRacingDrainsWakeAndLeaveNothingBehind() {
        let pipe = WakeUpPipe()
        let done = StopFlag()
        let signaller = DetachedThread.start {
            for _ in 0..<20_000 { pipe.signal() }
            done.set()
        }
        #expect(signaller)
        var wakes = 0
        while !done.isSet {
            if readable(pipe, milliseconds: 100) { wakes += 1 }
            pipe.drain()
        }
        pipe.drain()
        #expect(!readable(pipe), "a byte was left in the pipe after the last drain")
        #expect(wakes > 0)
    }
}
