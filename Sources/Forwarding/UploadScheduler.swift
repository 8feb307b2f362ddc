/// When one uploader's batches go out (docs/upload.md, "When batches go out").
public struct UploadSchedule: Sendable, Equatable {
    /// Seconds the oldest unsent location may wait after it was stored before its batch goes without a
    /// trigger. 0 sends every location as soon as it is stored.
    public var maxBatchAge: Double
    /// false: nothing is sent while the receiver sleeps; what came due goes when it wakes.
    public var uploadWhileAsleep: Bool
    /// Seconds before the first retry after a failed attempt; each further failure doubles it up to `maxBackoff`.
    public var initialBackoff: Double
    public var maxBackoff: Double
    /// The most locations one send carries.
    public var batchLimit: Int

    public init(
        maxBatchAge: Double = 900, uploadWhileAsleep: Bool = true, initialBackoff: Double = 10,
        maxBackoff: Double = 900, batchLimit: Int = 500
    ) {
        (self.maxBatchAge, self.uploadWhileAsleep, self.initialBackoff, self.maxBackoff, self.batchLimit)
            = (maxBatchAge, uploadWhileAsleep, initialBackoff, maxBackoff, batchLimit)
    }
}

/// Decides, for one uploader, when a batch goes out. Pure: the caller gives it the time and a random value with
/// every input and carries out the actions it returns (a send, a log line); it keeps no clock and does no I/O.
///
/// A batch goes when the policy delivers a location that ends a batch (a deferred batch, a significant change,
/// a request's answer), when the policy pauses, or when the oldest unsent location has waited `maxBatchAge`
/// since it was stored, whichever comes first. A failed send backs off exponentially with equal jitter; a send
/// that leaves more than a batch behind is followed at once by the next.
public struct UploadScheduler: Sendable {
    public enum Input: Sendable, Equatable {
        /// At start: how many locations the store holds unsent and when the oldest was stored. A backlog goes at
        /// once (unless held while the receiver sleeps).
        case started(waiting: Int, oldestStored: Double?)
        /// Locations just stored (a deferred batch arrives as one input).
        case stored(count: Int, reason: DeliveryReason)
        /// The policy paused updates (stationary): what is waiting goes now.
        case paused
        /// The receiver went to sleep (true) or woke (false).
        case receiverAsleep(Bool)
        /// What the send the scheduler asked for did: the outcome, how many locations the batch held, and how
        /// many the store holds unsent afterwards.
        case sendFinished(UploadOutcome, batchSize: Int, waitingAfter: Int)
        /// Time passed: the caller calls this at `nextDeadline`.
        case tick
    }

    public enum Action: Sendable, Equatable {
        /// Send the oldest unsent locations, at most `limit`, and report with `.sendFinished`.
        case send(limit: Int)
        /// News for the journal: what is held, sent, caught up.
        case log(String)
        /// A send that failed and when it is tried again: the journal files it as a warning.
        case trouble(String)
    }

    /// What a send in flight has to remember for when it finishes.
    public struct InFlight: Sendable, Equatable {
        /// Attempts in a row that failed before this one (0 when the last one succeeded).
        public var failures: Int
        /// A trigger came (or a stored location came due) while this send was in flight.
        public var dueAgain: Bool
        /// Locations stored while this send was in flight, and when the first of them was stored.
        public var storedMeanwhile: Int
        public var firstStoredMeanwhile: Double?
    }

    public enum State: Sendable, Equatable {
        /// Nothing waiting.
        case idle
        /// Locations waiting for a trigger, or for the oldest (stored at `oldestStored`) to reach `maxBatchAge`.
        case collecting(oldestStored: Double)
        /// A batch is in flight.
        case sending(InFlight)
        /// The last `failures` attempts in a row failed; the next goes at `until`.
        case backingOff(until: Double, failures: Int)
        /// A batch is due but the receiver sleeps and uploads wait for it to wake; `failures` as in `backingOff`.
        case held(failures: Int)
    }

    /// A stretch of catching up, from a failure or a backlog of more than a batch until nothing is waiting, for
    /// the "caught up" line.
    struct CatchUp: Sendable, Equatable {
        var sent = 0
        var batches = 0
    }

    public let name: String
    public let schedule: UploadSchedule
    public private(set) var state: State = .idle
    /// Locations not yet acknowledged, as far as the scheduler knows.
    public private(set) var waiting = 0
    /// When a send last had locations acknowledged, on the caller's clock.
    public private(set) var lastSuccess: Double?
    /// Network connections the sends opened (radio wake-ups), summed from their outcomes.
    public private(set) var connectionsOpened = 0
    public private(set) var receiverIsAsleep = false
    var catchUp: CatchUp?

    public init(name: String, schedule: UploadSchedule = UploadSchedule()) {
        self.name = name
        self.schedule = schedule
    }

    /// When the caller should call `handle(.tick, …)` next; nil when nothing is due by time alone.
    public var nextDeadline: Double? {
        switch state {
        case .collecting(let oldestStored): oldestStored + max(0, schedule.maxBatchAge)
        case .backingOff(let until, _): until
        case .idle, .sending, .held: nil
        }
    }

    /// Whether sends wait for the receiver to wake.
    var holding: Bool { receiverIsAsleep && !schedule.uploadWhileAsleep }

    var batchLimit: Int { max(1, schedule.batchLimit) }

    /// Handles one input at `now` (seconds on the caller's clock); `random`, in [0, 1), sets the jitter of a
    /// backoff this input starts.
    public mutating func handle(_ input: Input, now: Double, random: Double) -> [Action] {
        switch input {
        case .started(let count, let oldestStored):
            return start(waiting: max(0, count), oldestStored: oldestStored ?? now, now: now)
        case .stored(let count, let reason):
            guard count > 0 else { return [] }
            return store(count: count, endsBatch: reason != .update || schedule.maxBatchAge <= 0, now: now)
        case .paused:
            return batchIsDue(now: now)
        case .receiverAsleep(let asleep):
            return receiverSlept(asleep, now: now)
        case .sendFinished(let outcome, let batchSize, let waitingAfter):
            return finished(outcome, batchSize: max(0, batchSize), waitingAfter: max(0, waitingAfter), now: now,
                random: random)
        case .tick:
            return tick(now: now)
        }
    }

    // MARK: Inputs

    private mutating func start(waiting count: Int, oldestStored: Double, now: Double) -> [Action] {
        waiting = count
        switch state {
        case .idle, .collecting, .held:
            guard count > 0 else {
                state = .idle
                return []
            }
            state = .collecting(oldestStored: oldestStored)
            if count > batchLimit { catchUp = CatchUp() }
            var actions: [Action] = [.log("\(name): \(Self.count(count, "location")) waiting from before the start")]
            actions += batchIsDue(now: now)
            return actions
        case .sending, .backingOff:
            // Already under way: the send in flight or the retry takes the backlog too.
            return []
        }
    }

    private mutating func store(count: Int, endsBatch: Bool, now: Double) -> [Action] {
        waiting += count
        switch state {
        case .idle:
            state = .collecting(oldestStored: now)
        case .sending(var flight):
            flight.storedMeanwhile += count
            if flight.firstStoredMeanwhile == nil { flight.firstStoredMeanwhile = now }
            state = .sending(flight)
        case .collecting, .backingOff, .held:
            break
        }
        return endsBatch ? batchIsDue(now: now) : []
    }

    private mutating func receiverSlept(_ asleep: Bool, now: Double) -> [Action] {
        let wasHolding = holding
        receiverIsAsleep = asleep
        guard wasHolding, !holding else { return [] }
        switch state {
        case .held(let failures):
            return [.log("\(name): sending the \(Self.count(waiting, "waiting location")) now the receiver is awake")]
                + send(failures: failures)
        case .collecting(let oldestStored) where now >= oldestStored + max(0, schedule.maxBatchAge):
            return send(failures: 0)
        case .idle, .collecting, .sending, .backingOff:
            return []
        }
    }

    private mutating func tick(now: Double) -> [Action] {
        switch state {
        case .collecting(let oldestStored) where now >= oldestStored + max(0, schedule.maxBatchAge):
            return batchIsDue(now: now)
        case .backingOff(let until, let failures) where now >= until:
            if holding {
                state = .held(failures: failures)
                return [.log(holdLine)]
            }
            return send(failures: failures)
        case .idle, .collecting, .sending, .backingOff, .held:
            return []
        }
    }

    private mutating func finished(
        _ outcome: UploadOutcome, batchSize: Int, waitingAfter: Int, now: Double, random: Double
    ) -> [Action] {
        connectionsOpened += max(0, outcome.connectionsOpened)
        waiting = waitingAfter
        guard case .sending(let flight) = state else {
            // No send was asked for: only the count is news.
            switch state {
            case .collecting, .held: if waiting == 0 { state = .idle }
            case .idle, .sending, .backingOff: break
            }
            return []
        }
        let acknowledged = min(max(0, outcome.acknowledged), batchSize)
        if acknowledged > 0 || batchSize == 0 { lastSuccess = now }
        if acknowledged > 0, var stretch = catchUp {
            stretch.sent += acknowledged
            stretch.batches += 1
            catchUp = stretch
        }

        if acknowledged == batchSize && (batchSize > 0 || outcome.failure == nil) {
            return succeeded(flight, batchSize: batchSize, now: now)
        }
        let reason = outcome.failure ?? "the server took \(acknowledged) of \(Self.count(batchSize, "location"))"
        if acknowledged > 0 {
            // Progress: the link works, so the rest goes now without backing off.
            return [.log("\(name): \(acknowledged) of \(batchSize) sent (\(reason)); sending the rest now")]
                + continueNow(failures: 0)
        }
        let failures = flight.failures + 1
        let delay = backoff(failures: failures, random: random)
        state = .backingOff(until: now + delay, failures: failures)
        if catchUp == nil { catchUp = CatchUp() }
        if flight.failures == 0 {
            return [
                .trouble("\(name): offline: \(reason); \(Self.count(waiting, "location")) waiting, retrying in \(Self.duration(delay))")
            ]
        }
        return [.trouble("\(name): retrying in \(Self.duration(delay)): \(reason)")]
    }

    private mutating func succeeded(_ flight: InFlight, batchSize: Int, now: Double) -> [Action] {
        let olderLeft = waiting - flight.storedMeanwhile
        if olderLeft > 0 {
            // More than a batch was waiting: the next batch goes at once.
            var actions: [Action] = []
            if catchUp == nil {
                catchUp = CatchUp(sent: batchSize, batches: 1)
                actions.append(.log("\(name): catching up: \(Self.count(waiting, "location")) waiting, sending \(batchLimit) at a time"))
            }
            return actions + continueNow(failures: 0)
        }
        if waiting > 0 {
            let oldest = flight.firstStoredMeanwhile ?? now
            state = .collecting(oldestStored: oldest)
            if flight.dueAgain || now >= oldest + max(0, schedule.maxBatchAge) { return batchIsDue(now: now) }
            return []
        }
        state = .idle
        guard let stretch = catchUp else { return [] }
        catchUp = nil
        return [.log("\(name): caught up: \(Self.count(stretch.sent, "location")) sent in \(Self.count(stretch.batches, "batch")), none waiting")]
    }

    // MARK: Transitions

    /// Something asks for what is waiting to go now.
    private mutating func batchIsDue(now: Double) -> [Action] {
        switch state {
        case .idle:
            return []
        case .collecting:
            if holding {
                state = .held(failures: 0)
                return [.log(holdLine)]
            }
            return send(failures: 0)
        case .sending(var flight):
            flight.dueAgain = true
            state = .sending(flight)
            return []
        case .backingOff, .held:
            // A retry is already scheduled, or waits for the receiver to wake.
            return []
        }
    }

    /// After a send that made progress: the next goes now, unless the receiver sleeps.
    private mutating func continueNow(failures: Int) -> [Action] {
        guard waiting > 0 else {
            state = .idle
            return []
        }
        if holding {
            state = .held(failures: failures)
            return [.log(holdLine)]
        }
        return send(failures: failures)
    }

    private mutating func send(failures: Int) -> [Action] {
        state = .sending(InFlight(failures: failures, dueAgain: false, storedMeanwhile: 0, firstStoredMeanwhile: nil))
        return [.send(limit: batchLimit)]
    }

    /// The delay before retry number `failures`: initialBackoff doubled per further failure, capped at
    /// maxBackoff, then "equal jitter": a random point in its upper half, so retries of many uploaders spread
    /// out yet none comes sooner than half the nominal delay.
    func backoff(failures: Int, random: Double) -> Double {
        let initial = max(0, schedule.initialBackoff)
        let cap = max(initial, schedule.maxBackoff)
        var nominal = initial
        for _ in 1..<max(1, min(failures, 64)) where nominal < cap { nominal *= 2 }
        nominal = min(nominal, cap)
        let unit = random.isFinite ? min(max(random, 0), 1) : 0.5
        return nominal * (0.5 + 0.5 * unit)
    }

    private var holdLine: String {
        "\(name): holding uploads while the receiver sleeps; \(Self.count(waiting, "location")) waiting"
    }

    // MARK: Log formatting

    /// `1 location`, `1 204 locations`, `3 batches`.
    static func count(_ number: Int, _ noun: String) -> String {
        let plural = noun.hasSuffix("ch") ? noun + "es" : noun + "s"
        return "\(grouped(number)) \(number == 1 ? noun : plural)"
    }

    /// Thousands separated by spaces: `1 204`.
    static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var groups: [Substring] = []
        var end = digits.endIndex
        while end > digits.startIndex {
            let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
            groups.insert(digits[start..<end], at: 0)
            end = start
        }
        return (number < 0 ? "-" : "") + groups.joined(separator: " ")
    }

    /// `7 s`, `2 min 5 s`, `15 min`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "\(seconds) s" }
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        let minutes = whole / 60
        let rest = whole % 60
        return rest == 0 ? "\(minutes) min" : "\(minutes) min \(rest) s"
    }
}
