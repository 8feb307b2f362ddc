import TestSupport
import Testing

@testable import Forwarding

extension [UploadScheduler.Action] {
    var sends: [Int] {
        compactMap {
            if case .send(let limit) = $0 { return limit }
            return nil
        }
    }

    var logLines: [String] {
        compactMap {
            switch $0 {
            case .log(let line), .trouble(let line): line
            case .send: nil
            }
        }
    }
}

@Suite struct UploadSchedulerTests {
    static let name = "traccar http://traccar:5055"

    func scheduler(_ schedule: UploadSchedule = UploadSchedule()) -> UploadScheduler {
        UploadScheduler(name: Self.name, schedule: schedule)
    }

    static func success(_ count: Int) -> UploadOutcome { UploadOutcome(acknowledged: count, connectionsOpened: 1) }

    static func failure(_ why: String = "HTTP 500 from traccar:5055") -> UploadOutcome {
        UploadOutcome(acknowledged: 0, connectionsOpened: 1, failure: why)
    }

    // MARK: Triggers

    @Test func standardUpdatesWaitForMaxBatchAge() {
        var s = scheduler()
        #expect(s.handle(.stored(count: 1, reason: .update), now: 100, random: 0).isEmpty)
        #expect(s.handle(.stored(count: 1, reason: .update), now: 400, random: 0).isEmpty)
        #expect(s.state == .collecting(oldestStored: 100))
        // The age counts from the oldest location, not the newest.
        #expect(s.nextDeadline == 1000)
        #expect(s.handle(.tick, now: 999, random: 0).isEmpty)
        #expect(s.handle(.tick, now: 1000, random: 0) == [.send(limit: 500)])
        #expect(s.waiting == 2)
    }

    @Test(arguments: [DeliveryReason.deferredBatch, .significantChange, .request])
    func aDeliveryThatEndsABatchSendsAtOnce(_ reason: DeliveryReason) {
        var s = scheduler()
        _ = s.handle(.stored(count: 3, reason: .update), now: 0, random: 0)
        #expect(s.handle(.stored(count: 1, reason: reason), now: 30, random: 0) == [.send(limit: 500)])
        #expect(s.waiting == 4)
        #expect(s.nextDeadline == nil)
    }

    @Test func pausingSendsWhatIsWaiting() {
        var s = scheduler()
        #expect(s.handle(.paused, now: 0, random: 0).isEmpty, "nothing waiting, nothing to send")
        _ = s.handle(.stored(count: 2, reason: .update), now: 10, random: 0)
        #expect(s.handle(.paused, now: 20, random: 0) == [.send(limit: 500)])
    }

    @Test func maxBatchAgeZeroSendsEveryLocation() {
        var s = scheduler(UploadSchedule(maxBatchAge: 0))
        #expect(s.handle(.stored(count: 1, reason: .update), now: 0, random: 0) == [.send(limit: 500)])
        // One send at a time: the location stored meanwhile goes right after.
        #expect(s.handle(.stored(count: 1, reason: .update), now: 1, random: 0).isEmpty)
        let after = s.handle(.sendFinished(Self.success(1), batchSize: 1, waitingAfter: 1), now: 2, random: 0)
        #expect(after == [.send(limit: 500)])
        #expect(s.handle(.sendFinished(Self.success(1), batchSize: 1, waitingAfter: 0), now: 3, random: 0).isEmpty)
        #expect(s.state == .idle)
        #expect(s.lastSuccess == 3)
        #expect(s.connectionsOpened == 2)
    }

    @Test func locationsStoredDuringASendKeepTheirOwnAge() {
        var s = scheduler()
        _ = s.handle(.stored(count: 5, reason: .significantChange), now: 0, random: 0)
        _ = s.handle(.stored(count: 1, reason: .update), now: 4, random: 0)
        #expect(s.handle(.sendFinished(Self.success(5), batchSize: 5, waitingAfter: 1), now: 6, random: 0).isEmpty)
        #expect(s.state == .collecting(oldestStored: 4))
        #expect(s.nextDeadline == 904)
    }

    @Test func aTriggerDuringASendSendsAgainWhenItFinishes() {
        var s = scheduler()
        _ = s.handle(.stored(count: 5, reason: .request), now: 0, random: 0)
        #expect(s.handle(.stored(count: 1, reason: .significantChange), now: 1, random: 0).isEmpty)
        let after = s.handle(.sendFinished(Self.success(5), batchSize: 5, waitingAfter: 1), now: 2, random: 0)
        #expect(after == [.send(limit: 500)])
    }

    // MARK: The receiver asleep

    @Test func holdsWhileTheReceiverSleepsAndSendsOnWaking() {
        var s = scheduler(UploadSchedule(uploadWhileAsleep: false))
        #expect(s.handle(.receiverAsleep(true), now: 0, random: 0).isEmpty)
        let held = s.handle(.stored(count: 12, reason: .deferredBatch), now: 10, random: 0)
        #expect(held == [.log("\(Self.name): holding uploads while the receiver sleeps; 12 locations waiting")])
        #expect(s.state == .held(failures: 0))
        #expect(s.handle(.stored(count: 1, reason: .request), now: 20, random: 0).isEmpty)
        #expect(s.handle(.paused, now: 30, random: 0).isEmpty)
        #expect(s.handle(.tick, now: 5000, random: 0).isEmpty)
        let woke = s.handle(.receiverAsleep(false), now: 6000, random: 0)
        #expect(woke == [
            .log("\(Self.name): sending the 13 waiting locations now the receiver is awake"), .send(limit: 500),
        ])
    }

    @Test func aBatchThatCameDueAsleepWaitsAndOneNotYetDueKeepsWaiting() {
        var s = scheduler(UploadSchedule(maxBatchAge: 100, uploadWhileAsleep: false))
        _ = s.handle(.stored(count: 2, reason: .update), now: 0, random: 0)
        _ = s.handle(.receiverAsleep(true), now: 10, random: 0)
        #expect(s.handle(.tick, now: 100, random: 0).logLines.count == 1)
        #expect(s.state == .held(failures: 0))
        #expect(s.handle(.receiverAsleep(false), now: 150, random: 0).sends == [500])

        var t = scheduler(UploadSchedule(maxBatchAge: 100, uploadWhileAsleep: false))
        _ = t.handle(.stored(count: 2, reason: .update), now: 0, random: 0)
        _ = t.handle(.receiverAsleep(true), now: 10, random: 0)
        #expect(t.handle(.receiverAsleep(false), now: 50, random: 0).isEmpty)
        #expect(t.state == .collecting(oldestStored: 0))
    }

    @Test func aSendInFlightFinishesWhileAsleepAndTheRestIsHeld() {
        var s = scheduler(UploadSchedule(uploadWhileAsleep: false, batchLimit: 10))
        _ = s.handle(.started(waiting: 25, oldestStored: 0), now: 0, random: 0)
        _ = s.handle(.receiverAsleep(true), now: 1, random: 0)
        let after = s.handle(.sendFinished(Self.success(10), batchSize: 10, waitingAfter: 15), now: 2, random: 0)
        #expect(after.sends.isEmpty)
        #expect(s.state == .held(failures: 0))
    }

    @Test func uploadWhileAsleepIgnoresTheReceiver() {
        var s = scheduler(UploadSchedule(uploadWhileAsleep: true))
        _ = s.handle(.receiverAsleep(true), now: 0, random: 0)
        #expect(s.handle(.stored(count: 1, reason: .significantChange), now: 1, random: 0) == [.send(limit: 500)])
    }

    // MARK: Backoff

    /// Fails `count` sends in a row, each retried at its deadline; returns the delays.
    func failRepeatedly(_ s: inout UploadScheduler, count: Int, random: Double, from start: Double) -> [Double] {
        var now = start
        var delays: [Double] = []
        for _ in 0..<count {
            _ = s.handle(.sendFinished(Self.failure(), batchSize: 37, waitingAfter: 37), now: now, random: random)
            guard case .backingOff(let until, _) = s.state else {
                Issue.record("not backing off after a failure: \(s.state)")
                return delays
            }
            delays.append(until - now)
            #expect(s.handle(.tick, now: until - 0.001, random: 0).sends.isEmpty)
            now = until
            #expect(s.handle(.tick, now: now, random: 0).sends == [500])
        }
        return delays
    }

    @Test(arguments: [0.0, 0.37, 0.999_999])
    func backoffDoublesWithEqualJitterUpToTheCap(random: Double) {
        var s = scheduler()
        _ = s.handle(.stored(count: 37, reason: .request), now: 0, random: 0)
        let delays = failRepeatedly(&s, count: 10, random: random, from: 1)
        let nominal: [Double] = [10, 20, 40, 80, 160, 320, 640, 900, 900, 900]
        #expect(delays.count == nominal.count)
        for (delay, full) in zip(delays, nominal) {
            #expect(delay >= full / 2 && delay <= full)
            #expect(abs(delay - full * (0.5 + 0.5 * random)) < 1e-9)
        }
    }

    @Test func noTriggerSendsEarlyWhileBackingOff() {
        var s = scheduler()
        _ = s.handle(.stored(count: 1, reason: .request), now: 0, random: 0)
        _ = s.handle(.sendFinished(Self.failure(), batchSize: 1, waitingAfter: 1), now: 1, random: 0.5)
        #expect(s.state == .backingOff(until: 1 + 7.5, failures: 1))
        #expect(s.handle(.stored(count: 1, reason: .significantChange), now: 2, random: 0).isEmpty)
        #expect(s.handle(.paused, now: 3, random: 0).isEmpty)
        #expect(s.handle(.started(waiting: 2, oldestStored: 0), now: 4, random: 0).isEmpty)
        #expect(s.nextDeadline == 8.5)
        #expect(s.handle(.tick, now: 8.5, random: 0) == [.send(limit: 500)])
    }

    @Test func aSuccessResetsTheBackoff() {
        var s = scheduler()
        _ = s.handle(.stored(count: 37, reason: .request), now: 0, random: 0)
        let delays = failRepeatedly(&s, count: 4, random: 1 - 1e-9, from: 1)
        #expect(delays.last.map { $0 > 79 } == true)
        _ = s.handle(.sendFinished(Self.success(37), batchSize: 37, waitingAfter: 0), now: 500, random: 0)
        _ = s.handle(.stored(count: 1, reason: .request), now: 600, random: 0)
        _ = s.handle(.sendFinished(Self.failure(), batchSize: 1, waitingAfter: 1), now: 601, random: 1 - 1e-9)
        guard case .backingOff(let until, let failures) = s.state else {
            Issue.record("not backing off: \(s.state)")
            return
        }
        #expect(failures == 1)
        #expect(until - 601 <= 10)
    }

    @Test func aPartialSuccessResetsTheBackoffAndContinuesAtOnce() {
        var s = scheduler()
        _ = s.handle(.stored(count: 500, reason: .deferredBatch), now: 0, random: 0)
        _ = failRepeatedly(&s, count: 3, random: 0.5, from: 1)
        let partial = UploadOutcome(acknowledged: 120, connectionsOpened: 1, failure: "timed out after 30 s")
        let after = s.handle(.sendFinished(partial, batchSize: 500, waitingAfter: 380), now: 200, random: 0)
        #expect(after == [
            .log("\(Self.name): 120 of 500 sent (timed out after 30 s); sending the rest now"), .send(limit: 500),
        ])
        #expect(s.lastSuccess == 200)
        _ = s.handle(.sendFinished(Self.failure(), batchSize: 380, waitingAfter: 380), now: 210, random: 1 - 1e-9)
        #expect(s.state == .backingOff(until: 210 + 10 * (0.5 + 0.5 * (1 - 1e-9)), failures: 1))
    }

    @Test func aServerThatTakesPartWithoutSayingWhyIsStillReported() {
        var s = scheduler()
        _ = s.handle(.stored(count: 10, reason: .request), now: 0, random: 0)
        let after = s.handle(
            .sendFinished(UploadOutcome(acknowledged: 0, connectionsOpened: 1), batchSize: 10, waitingAfter: 10),
            now: 1, random: 0)
        #expect(after.logLines.first?.contains("the server took 0 of 10 locations") == true)
        #expect(s.nextDeadline != nil)
    }

    // MARK: Catching up

    @Test func aBacklogGoesInSeveralBatchesAtOnce() {
        var s = scheduler()
        let start = s.handle(.started(waiting: 1204, oldestStored: -86_400), now: 0, random: 0)
        #expect(start == [.log("\(Self.name): 1 204 locations waiting from before the start"), .send(limit: 500)])
        #expect(s.handle(.sendFinished(Self.success(500), batchSize: 500, waitingAfter: 704), now: 1, random: 0) == [.send(limit: 500)])
        #expect(s.handle(.sendFinished(Self.success(500), batchSize: 500, waitingAfter: 204), now: 2, random: 0) == [.send(limit: 500)])
        let last = s.handle(.sendFinished(Self.success(204), batchSize: 204, waitingAfter: 0), now: 3, random: 0)
        #expect(last == [.log("\(Self.name): caught up: 1 204 locations sent in 3 batches, none waiting")])
        #expect(s.state == .idle)
        #expect(s.waiting == 0)
    }

    @Test func aBacklogFoundAfterASendIsCaughtUpToo() {
        var s = scheduler(UploadSchedule(batchLimit: 100))
        _ = s.handle(.stored(count: 250, reason: .deferredBatch), now: 0, random: 0)
        let second = s.handle(.sendFinished(Self.success(100), batchSize: 100, waitingAfter: 150), now: 1, random: 0)
        #expect(second == [.log("\(Self.name): catching up: 150 locations waiting, sending 100 at a time"), .send(limit: 100)])
        #expect(s.handle(.sendFinished(Self.success(100), batchSize: 100, waitingAfter: 50), now: 2, random: 0).logLines.isEmpty)
        let last = s.handle(.sendFinished(Self.success(50), batchSize: 50, waitingAfter: 0), now: 3, random: 0)
        #expect(last.logLines == ["\(Self.name): caught up: 250 locations sent in 3 batches, none waiting"])
    }

    @Test func offlineThenRetriesThenCaughtUp() {
        let name = "owntracks mqtt://broker:1883 owntracks/pi/car"
        var s = UploadScheduler(name: name, schedule: UploadSchedule())
        _ = s.handle(.stored(count: 37, reason: .significantChange), now: 0, random: 0)
        let refused = UploadOutcome(acknowledged: 0, connectionsOpened: 1, failure: "connection refused by broker:1883")
        let offline = s.handle(.sendFinished(refused, batchSize: 37, waitingAfter: 37), now: 1, random: 1 - 1e-9)
        #expect(offline == [.trouble("\(name): offline: connection refused by broker:1883; 37 locations waiting, retrying in 10 s")])
        _ = s.handle(.tick, now: 11, random: 0)
        let again = s.handle(.sendFinished(Self.failure("HTTP 500 from traccar:5055"), batchSize: 37, waitingAfter: 37), now: 12, random: 1 - 1e-9)
        #expect(again == [.trouble("\(name): retrying in 20 s: HTTP 500 from traccar:5055")])
        _ = s.handle(.tick, now: 32, random: 0)
        let back = s.handle(.sendFinished(Self.success(37), batchSize: 37, waitingAfter: 0), now: 33, random: 0)
        #expect(back == [.log("\(name): caught up: 37 locations sent in 1 batch, none waiting")])
        #expect(s.connectionsOpened == 3)
        #expect(s.lastSuccess == 33)
    }

    @Test func anOrdinarySendLogsNothing() {
        var s = scheduler()
        var actions = s.handle(.stored(count: 3, reason: .update), now: 0, random: 0)
        actions += s.handle(.tick, now: 900, random: 0)
        actions += s.handle(.sendFinished(Self.success(3), batchSize: 3, waitingAfter: 0), now: 901, random: 0)
        #expect(actions == [.send(limit: 500)])
    }

    @Test func ticksLogNothingWhileNothingChanges() {
        var s = scheduler(UploadSchedule(uploadWhileAsleep: false))
        _ = s.handle(.stored(count: 3, reason: .request), now: 0, random: 0)
        _ = s.handle(.sendFinished(Self.failure(), batchSize: 3, waitingAfter: 3), now: 1, random: 0)
        var logs: [String] = []
        // Backing off, then held asleep: many ticks, two state changes (the retry, the hold).
        for step in 0..<200 { logs += s.handle(.tick, now: 1 + Double(step) * 0.01, random: 0).logLines }
        #expect(logs.isEmpty)
        _ = s.handle(.receiverAsleep(true), now: 3, random: 0)
        for step in 0..<200 { logs += s.handle(.tick, now: 10 + Double(step), random: 0).logLines }
        #expect(logs == ["\(Self.name): holding uploads while the receiver sleeps; 3 locations waiting"])
        #expect(s.state == .held(failures: 1))
    }

    @Test func logFormatting() {
        #expect(UploadScheduler.grouped(0) == "0")
        #expect(UploadScheduler.grouped(999) == "999")
        #expect(UploadScheduler.grouped(1204) == "1 204")
        #expect(UploadScheduler.grouped(1_234_567) == "1 234 567")
        #expect(UploadScheduler.count(1, "batch") == "1 batch")
        #expect(UploadScheduler.count(2, "batch") == "2 batches")
        #expect(UploadScheduler.duration(9.6) == "10 s")
        #expect(UploadScheduler.duration(125) == "2 min 5 s")
        #expect(UploadScheduler.duration(900) == "15 min")
    }

    // MARK: Random runs

    /// A store and a network driven by a seeded generator around one scheduler, checking after every input
    /// what must always hold.
    struct Simulation {
        var rng: SplitMix64
        var scheduler: UploadScheduler
        var now = 0.0
        var store = 0
        var inFlight: Int?
        var asleep = false
        var networkUp = true
        var problems: [String] = []

        init(seed: UInt64) {
            rng = SplitMix64(seed: seed)
            let schedule = UploadSchedule(
                maxBatchAge: [0, 60, 900][Int(rng.next() % 3)], uploadWhileAsleep: rng.next() % 2 == 0,
                initialBackoff: 10, maxBackoff: 900, batchLimit: [1, 50, 500][Int(rng.next() % 3)])
            scheduler = UploadScheduler(name: "seed \(seed)", schedule: schedule)
        }

        mutating func handle(_ input: UploadScheduler.Input) {
            let before = scheduler.state
            let actions = scheduler.handle(input, now: now, random: rng.unit())
            for action in actions {
                guard case .send(let limit) = action else { continue }
                if inFlight != nil { problems.append("\(now): a second send while one is in flight") }
                if asleep && !scheduler.schedule.uploadWhileAsleep {
                    problems.append("\(now): a send while the receiver sleeps")
                }
                if case .backingOff(let until, _) = before, now < until {
                    problems.append("\(now): a send before the backoff deadline \(until)")
                }
                inFlight = min(limit, store)
            }
            if case .tick = input, before == scheduler.state, !actions.logLines.isEmpty {
                problems.append("\(now): a log line without a change of state: \(actions.logLines)")
            }
            if scheduler.waiting != store {
                problems.append("\(now): the scheduler counts \(scheduler.waiting) waiting, the store \(store)")
            }
        }

        mutating func finishSend(networkUp: Bool) {
            guard let batch = inFlight else { return }
            inFlight = nil
            let outcome: UploadOutcome
            if !networkUp {
                outcome = UploadOutcome(acknowledged: 0, connectionsOpened: 1, failure: "connection refused")
            } else if batch > 1 && rng.next() % 5 == 0 {
                outcome = UploadOutcome(
                    acknowledged: 1 + Int(rng.next() % UInt64(batch - 1)), connectionsOpened: 1, failure: "timed out")
            } else {
                outcome = UploadOutcome(acknowledged: batch, connectionsOpened: 1)
            }
            store -= outcome.acknowledged
            handle(.sendFinished(outcome, batchSize: batch, waitingAfter: store))
        }

        mutating func randomStep() {
            switch rng.next() % 10 {
            case 0, 1, 2:
                let count = rng.next() % 20 == 0 ? 1 + Int(rng.next() % 1500) : 1 + Int(rng.next() % 5)
                let reason = DeliveryReason.allCases[Int(rng.next() % 4)]
                store += count
                handle(.stored(count: count, reason: reason))
            case 3:
                handle(.paused)
            case 4:
                asleep.toggle()
                handle(.receiverAsleep(asleep))
            case 5:
                networkUp.toggle()
            case 6, 7:
                finishSend(networkUp: networkUp)
            default:
                if let deadline = scheduler.nextDeadline, rng.next() % 2 == 0 {
                    now = max(now, deadline)
                } else {
                    now += rng.unit() * 120
                }
                handle(.tick)
            }
        }

        /// With the network up and the receiver awake, follows deadlines and finishes sends until nothing is
        /// waiting; false if it gets stuck.
        mutating func drain() -> Bool {
            networkUp = true
            if asleep {
                asleep = false
                handle(.receiverAsleep(false))
            }
            for _ in 0..<100_000 {
                if inFlight != nil {
                    now += 0.5
                    finishSend(networkUp: true)
                } else if let deadline = scheduler.nextDeadline {
                    now = max(now, deadline)
                    handle(.tick)
                } else {
                    return store == 0 && scheduler.state == .idle
                }
            }
            return false
        }
    }

    @Test(arguments: 0..<200)
    func invariantsHoldOverRandomRuns(seed: UInt64) {
        var simulation = Simulation(seed: seed)
        simulation.handle(.started(waiting: 0, oldestStored: nil))
        for _ in 0..<400 { simulation.randomStep() }
        let drained = simulation.drain()
        #expect(simulation.problems.isEmpty, "seed \(seed): \(simulation.problems.prefix(3))")
        #expect(drained, "seed \(seed): \(simulation.store) locations never sent; state \(simulation.scheduler.state)")
    }
}
