@testable import Receivers
import Synchronization
import Testing

@Suite struct InjectedPowerSwitchTests {
    @Test func recordsEachChangeWithItsTimeAndForwardsIt() throws {
        let clock = Mutex(10.0)
        let seen = Mutex<[Bool]>([])
        let powerSwitch = InjectedPowerSwitch(
            description: "emulated enable line",
            line: { powered in seen.withLock { $0.append(powered) } },
            clock: { clock.withLock { $0 += 0.5; return $0 } })
        #expect(powerSwitch.isPowered == nil)
        try powerSwitch.setPowered(false)
        try powerSwitch.setPowered(true)
        #expect(seen.withLock { $0 } == [false, true])
        #expect(powerSwitch.changes == [.init(powered: false, at: 10.5), .init(powered: true, at: 11.0)])
        #expect(powerSwitch.isPowered == true)
        #expect(powerSwitch.description == "emulated enable line")
    }

    @Test func aRefusedChangeIsRecordedAndThrownAndLeavesTheStateAlone() {
        let refuse = Mutex(false)
        let powerSwitch = InjectedPowerSwitch(powered: true) { _ throws(PowerSwitchError) in
            if refuse.withLock({ $0 }) { throw PowerSwitchError("line stuck") }
        }
        refuse.withLock { $0 = true }
        #expect(throws: PowerSwitchError("line stuck")) { try powerSwitch.setPowered(false) }
        #expect(powerSwitch.isPowered == true)
        #expect(powerSwitch.changes.map { $0.failure } == [PowerSwitchError("line stuck")])
        #expect(powerSwitch.changes.map { $0.powered } == [false])
    }

    @Test func withoutALineItOnlyRecordsOnTheMonotonicClock() throws {
        let powerSwitch = InjectedPowerSwitch()
        try powerSwitch.setPowered(false)
        try powerSwitch.setPowered(false)
        let times = powerSwitch.changes.map { $0.at }
        #expect(times.count == 2)
        #expect(times[0] > 0 && times[1] >= times[0])
        #expect(powerSwitch.isPowered == false)
    }

    @Test func theLineMayReadTheSwitchWhileItRuns() throws {
        let box = Mutex<InjectedPowerSwitch?>(nil)
        let seenBefore = Mutex<[Bool?]>([])
        let powerSwitch = InjectedPowerSwitch(powered: true) { _ in
            let current = box.withLock { $0 }?.isPowered
            seenBefore.withLock { $0.append(current) }
        }
        box.withLock { $0 = powerSwitch }
        try powerSwitch.setPowered(false)
        #expect(seenBefore.withLock { $0 } == [true])
        box.withLock { $0 = nil }
    }
}
