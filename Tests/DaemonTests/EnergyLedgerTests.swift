import Daemon
import Policy
import Receivers
import Testing

/// Round currents so each charge is figured by hand: 36 mA for 100 s is 3600 mA·s, 1 mAh.
private let model = ReceiverModel(
    name: "test-ubx", powerControl: .ubx, supportedRegimes: Set(ReceiverRegime.allCases),
    current: ReceiverCurrents(acquisition: 45, tracking: 36, powerSave: 18, standby: 3.6, backup: 0.36, off: 0),
    timeToFirstFix: TimeToFirstFix(hot: 2, warm: 30, cold: 40, hotWindow: 7200), backupSupplyWhenOff: true,
    connection: .uart)

private func event(_ kind: PowerEvent.Kind, _ regime: ReceiverRegime?) -> PowerEvent {
    PowerEvent(kind, regime: regime, detail: "test")
}

/// mA·s as mAh.
private func mAh(_ milliampSeconds: Double) -> Double { milliampSeconds / 3600 }

private func close(_ value: Double, _ expected: Double) -> Bool { abs(value - expected) < 1e-9 }

@Suite struct EnergyLedgerTests {
    @Test func downOnlyOnceQuietThenAcquisitionUntilTheFirstFix() {
        var ledger = EnergyLedger(model: model, start: 1000)
        ledger.record(event(.regimeCommanded, .standby), at: 1100)
        #expect(ledger.charging == .running(.continuous))
        ledger.record(event(.quiet, .standby), at: 1101)
        #expect(ledger.charging == .down(.standby))
        ledger.record(event(.regimeCommanded, .continuous), at: 1402)
        #expect(ledger.charging == .acquiring(.continuous))
        ledger.record(event(.firstFixAfterWake, .standby), at: 1404)
        #expect(ledger.charging == .running(.continuous))
        // 101 s at 36 mA, 301 s at 3.6, 2 s at 45, 96 s at 36.
        let running: Double = (101 + 96) * 36
        let standby: Double = 301 * 3.6
        let acquiring: Double = 2 * 45
        let expected = mAh(running + standby + acquiring)
        #expect(close(ledger.charge(at: 1500), expected))
        #expect(close(ledger.alwaysOn(at: 1500), mAh(500 * 36)))
        #expect(ledger.summary(at: 1500) == "2.30 mAh against 5.00 mAh always on (54 % saved)")
        #expect(close(ledger.saving(at: 1500) ?? 0, (5 - expected) / 5 * 100))
    }

    @Test func withoutPowerControlItChargesTrackingThroughout() {
        let ledger = EnergyLedger(model: model, start: 0)
        #expect(close(ledger.charge(at: 3600), 36))
        #expect(close(ledger.alwaysOn(at: 3600), 36))
        #expect(ledger.saving(at: 3600) == 0)
        #expect(ledger.summary(at: 3600) == "36.00 mAh against 36.00 mAh always on (0 % saved)")
        #expect(ledger.saving(at: 0) == nil)
        #expect(ledger.summary(at: 0) == "0.00 mAh against 0.00 mAh always on")
    }

    @Test func aDownCommandWithNoEffectIsChargedRunning() {
        var ledger = EnergyLedger(model: model, start: 0)
        ledger.record(event(.regimeCommanded, .standby), at: 10)
        ledger.record(event(.noEffect, .standby), at: 40)
        #expect(ledger.charging == .running(.continuous))
        #expect(close(ledger.charge(at: 100), 1))
    }

    @Test func powerSaveIsChargedAtOnceAndAFailedCommandCountsAsRunning() {
        var ledger = EnergyLedger(model: model, start: 0)
        ledger.record(event(.regimeCommanded, .powerSave), at: 0)
        #expect(ledger.charging == .running(.powerSave))
        ledger.record(event(.commandFailed, .powerSave), at: 50)
        #expect(ledger.charging == .running(.continuous))
        #expect(close(ledger.charge(at: 100), mAh(50 * 18 + 50 * 36)))
    }

    @Test func aReceiverWokenByGpsdIsChargedRunningUntilQuietAgain() {
        var ledger = EnergyLedger(model: model, start: 0)
        ledger.record(event(.quiet, .off), at: 0)  // UBX off is backup: 0.36 mA
        ledger.record(event(.reapplied, .off), at: 100)
        #expect(ledger.charging == .running(.continuous))
        ledger.record(event(.quiet, .off), at: 110)
        #expect(close(ledger.charge(at: 210), mAh(100 * 0.36 + 10 * 36 + 100 * 0.36)))
    }

    @Test func aFailedWakeKeepsChargingAcquisitionThroughTheRetry() {
        var ledger = EnergyLedger(model: model, start: 0)
        ledger.record(event(.quiet, .standby), at: 0)
        ledger.record(event(.regimeCommanded, .continuous), at: 100)
        ledger.record(event(.wakeFailed, .standby), at: 110)
        #expect(ledger.charging == .acquiring(.continuous))
        ledger.record(event(.regimeCommanded, .continuous), at: 130)
        ledger.record(event(.firstFixAfterWake, .standby), at: 140)
        #expect(close(ledger.charge(at: 200), mAh(100 * 3.6 + 40 * 45 + 60 * 36)))
    }

    @Test func aReleasedDeviceSavesNothing() {
        // Closing the device leaves the receiver's current unknown: charged at tracking, and no acquisition.
        var ledger = EnergyLedger(model: .genericNMEA, start: 0)
        ledger.record(event(.quiet, .off), at: 10)
        ledger.record(event(.regimeCommanded, .continuous), at: 100)
        #expect(ledger.charging == .running(.continuous))
        #expect(close(ledger.charge(at: 200), ledger.alwaysOn(at: 200)))
    }

    /// The profile's model has commands (UBX), but the receiver gpsd found has none: whatever "quiet" power
    /// control saw (a released watch hears nothing), no saving is claimed, for any mechanism that cannot lower
    /// the receiver's current.
    @Test(arguments: [PowerControl.closeDevice, .sirf])
    func aMechanismThatCannotPowerDownSavesNothing(mechanism: PowerControl) {
        var ledger = EnergyLedger(model: model, start: 0)
        ledger.record(PowerEvent(.receiverUnknown, detail: "NMEA0183", mechanism: mechanism), at: 1)
        #expect(!ledger.mechanismSavesPower)
        ledger.record(event(.regimeCommanded, .off), at: 10)
        ledger.record(event(.quiet, .off), at: 11)
        ledger.record(event(.regimeCommanded, .powerSave), at: 100)
        ledger.record(event(.quiet, .standby), at: 150)
        #expect(close(ledger.charge(at: 300), ledger.alwaysOn(at: 300)))
        #expect(ledger.summary(at: 300).hasSuffix("(0 % saved)"))
        // The same events from a receiver UBX powers down are a saving.
        var commanded = EnergyLedger(model: model, start: 0)
        commanded.record(PowerEvent(.receiverIdentified, detail: "u-blox", mechanism: .ubx), at: 1)
        commanded.record(event(.regimeCommanded, .off), at: 10)
        commanded.record(event(.quiet, .off), at: 11)
        #expect(commanded.charge(at: 300) < commanded.alwaysOn(at: 300) / 2)
    }

    @Test func eventsThatChangeNothingAndLateEvents() {
        var ledger = EnergyLedger(model: model, start: 0)
        ledger.record(event(.quiet, .standby), at: 100)
        for kind in [PowerEvent.Kind.receiverIdentified, .receiverUnknown, .regimeUnreachable, .firstFixAfterWake] {
            ledger.record(event(kind, .off), at: 150)
        }
        #expect(ledger.charging == .down(.standby))
        // An event stamped before the last one counts from the last one's time.
        ledger.record(event(.noEffect, .standby), at: 120)
        #expect(close(ledger.charge(at: 250), mAh(100 * 36 + 50 * 3.6 + 100 * 36)))
    }

    @Test func summaryOfARunThatDrewMore() {
        #expect(EnergyLedger.summary(charge: 1.1, alwaysOn: 1) == "1.10 mAh against 1.00 mAh always on (10 % more)")
        #expect(EnergyLedger.summary(charge: 0.42, alwaysOn: 1.73) == "0.42 mAh against 1.73 mAh always on (76 % saved)")
    }
}
