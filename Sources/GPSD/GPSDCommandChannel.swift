import GPSModel
import Synchronization
import SystemInterface

/// What became of a command sent through a `GPSDCommandChannel`.
public enum GPSDCommandOutcome: Sendable, Equatable {
    /// gpsd answered: the command's DEVICE (or other) report, or `.other("ACK")` from gpsd 3.23+.
    case answered(Report)
    /// gpsd answered with an ERROR report; its message.
    case refused(message: String)
    /// The command was not written, or gpsd gave no answer: no connection, connection lost, no answer within
    /// the channel's timeout, or the channel closed.
    case failed(reason: String)

    /// The device gpsd could not open, when it refused so: gpsd 3.22 to 3.25 answer a command for a device
    /// path that is gone (unplugged, its node removed) with `Can't open PATH.`.
    public var unopenableDevice: String? {
        guard case .refused(let message) = self, message.hasPrefix("Can't open "), message.hasSuffix("."),
            message.count > "Can't open .".count
        else { return nil }
        return String(message.dropFirst("Can't open ".count).dropLast())
    }
}

/// Commands for gpsd through a live connection that another thread reads: any thread queues, the reader
/// thread writes them on its session (libgps sessions are not thread-safe) and hands each its answer.
///
/// Commands are written in order, one at a time: the next goes out once the previous is answered or its
/// `answerTimeout` has passed, so each answer belongs to one command. The reader writes between reads: at
/// once while gpsd is sending, within its poll interval (`LiveReportSource.pollMicroseconds`) while it is
/// quiet. A command queued while there is no connection fails at once rather than going out later to a
/// receiver whose state may have changed.
public final class GPSDCommandChannel: Sendable {
    public typealias Completion = @Sendable (GPSDCommandOutcome) -> Void

    /// How long gpsd may take to answer before the command counts as failed (seconds).
    public let answerTimeout: Double

    private struct Queued {
        let command: GPSDCommand
        let completion: Completion
    }

    private struct State {
        var connected = false
        var closed = false
        var queue: [Queued] = []
        var awaiting: (queued: Queued, deadline: Double)?
    }

    private let state = Mutex(State())
    /// What the reader polls beside gpsd's socket: a command queued while gpsd is silent (a receiver asleep
    /// sends nothing) goes out at once instead of at the reader's next poll timeout.
    private let wakeUp = WakeUpPipe()

    public init(answerTimeout: Double = 5) {
        self.answerTimeout = answerTimeout
    }

    /// What the reader polls to learn of a queued command (-1 when no pipe could be made).
    package var wakeDescriptor: Int32 { wakeUp.descriptor }

    /// Empties the wake-up pipe (the reader's side).
    package func drainWake() { wakeUp.drain() }

    /// Queues `command`; `completion` is called once with its outcome, on the reader's thread (or on this one
    /// when it fails at once). It must not block.
    public func send(_ command: GPSDCommand, completion: @escaping Completion = { _ in }) {
        let refusal: String? = state.withLock { state in
            if state.closed { return "the gpsd connection has ended" }
            if !state.connected { return "not connected to gpsd" }
            state.queue.append(Queued(command: command, completion: completion))
            return nil
        }
        if let refusal {
            completion(.failed(reason: refusal))
        } else {
            wakeUp.signal()
        }
    }

    // MARK: The reader's side

    /// The reader is connected and watching: commands are accepted from now on.
    package func connected() {
        state.withLock { $0.connected = !$0.closed }
    }

    /// Writes the next queued command when none awaits its answer; fails one whose answer is overdue.
    /// `write` sends one command on the session and throws when it cannot.
    package func writeNext(now: Double, write: (GPSDCommand) throws(GPSDError) -> Void) {
        var finished: [(Completion, GPSDCommandOutcome)] = []
        while true {
            let next: Queued? = state.withLock { state in
                if let awaiting = state.awaiting {
                    guard now >= awaiting.deadline else { return nil }
                    state.awaiting = nil
                    let silence = GPSDCommandOutcome.failed(reason: "gpsd did not answer \(awaiting.queued.command)")
                    finished.append((awaiting.queued.completion, silence))
                }
                guard !state.queue.isEmpty else { return nil }
                let queued = state.queue.removeFirst()
                state.awaiting = (queued, now + answerTimeout)
                return queued
            }
            guard let next else { break }
            do throws(GPSDError) {
                try write(next.command)
                break
            } catch {
                state.withLock { $0.awaiting = nil }
                finished.append((next.completion, .failed(reason: error.description)))
            }
        }
        for (completion, outcome) in finished { completion(outcome) }
    }

    /// Takes one report the reader decoded: the answer to the command awaiting one, if it is. Returns the
    /// outcome it handed the command, so the reader can act on what it says of the devices.
    @discardableResult
    package func observe(_ report: Report) -> GPSDCommandOutcome? {
        let answered: Queued? = state.withLock { state in
            guard let awaiting = state.awaiting, awaiting.queued.command.isAnswered(by: report) else { return nil }
            state.awaiting = nil
            return awaiting.queued
        }
        guard let answered else { return nil }
        let outcome: GPSDCommandOutcome
        if case .error(let message) = report { outcome = .refused(message: message) } else { outcome = .answered(report) }
        answered.completion(outcome)
        return outcome
    }

    /// The connection ended (`reason`): every command queued or awaiting fails; new ones fail until the
    /// reader is `connected` again. With `closing`, for good.
    package func disconnected(reason: String, closing: Bool = false) {
        let failed: [Queued] = state.withLock { state in
            state.connected = false
            if closing { state.closed = true }
            var failed = state.awaiting.map { [$0.queued] } ?? []
            failed += state.queue
            state.awaiting = nil
            state.queue.removeAll()
            return failed
        }
        for queued in failed { queued.completion(.failed(reason: reason)) }
    }
}
