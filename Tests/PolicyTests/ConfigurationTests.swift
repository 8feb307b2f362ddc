import GPSModel
import Policy
import Testing

/// Configuration and receiver models: defaults as documented, validation naming the field.
@Suite struct ConfigurationTests {
    @Test func defaultsAreValid() {
        #expect(PolicyConfiguration().validate().isEmpty)
        #expect(UpdatesConfiguration().validate().isEmpty)
        for model in ReceiverModel.builtIn { #expect(model.validate().isEmpty, "\(model.name)") }
    }

    @Test func defaultsMatchTheSpec() {
        let configuration = PolicyConfiguration()
        #expect(configuration.maximumAge == 30)
        #expect(configuration.requestTimeout == 15)
        #expect(configuration.significantChange.distance == 500)
        #expect(configuration.significantChange.minimumInterval == 300)
        let table: [(ActivityType, Double, Double?)] = [
            (.automotiveNavigation, 50, 300), (.fitness, 25, 120), (.otherNavigation, 50, 600), (.other, 30, 180),
            (.airborne, 100, nil),
        ]
        for (activity, radius, window) in table {
            #expect(configuration.stationary[activity].radius == radius || activity == .airborne)
            #expect(configuration.stationary[activity].window == window)
        }
        let updates = UpdatesConfiguration()
        #expect(updates.desiredAccuracy == .best && updates.distanceFilter == nil && updates.pausesAutomatically)
        #expect(updates.autoResume && updates.activityType == .other && updates.effectiveAccuracyLimit == 100)
    }

    struct InvalidCase: Sendable, CustomTestStringConvertible {
        var field: String
        var mutate: @Sendable (inout PolicyConfiguration) -> Void
        var testDescription: String { field }
    }

    static let invalid: [InvalidCase] = [
        InvalidCase(field: "maximumAge") { $0.maximumAge = -1 },
        InvalidCase(field: "warmUp") { $0.warmUp = .nan },
        InvalidCase(field: "stationary.fitness.radius") { $0.stationary.fitness.radius = 0 },
        InvalidCase(field: "stationary.automotiveNavigation.window") { $0.stationary.automotiveNavigation.window = -5 },
        InvalidCase(field: "stationary.other.probeGrowth") { $0.stationary.other.probeGrowth = 0.5 },
        InvalidCase(field: "stationary.otherNavigation.maximumProbeInterval") {
            $0.stationary.otherNavigation.maximumProbeInterval = 1
        },
        InvalidCase(field: "dutyCycle.kilometer.maximumInterval") { $0.dutyCycle.kilometer.maximumInterval = 10 },
        InvalidCase(field: "acquisition.timeout") { $0.acquisition.timeout = 0 },
        InvalidCase(field: "deferredBufferCapacity") { $0.deferredBufferCapacity = 0 },
        InvalidCase(field: "significantChange.distance") { $0.significantChange.distance = .infinity },
        InvalidCase(field: "reducedGridSize") { $0.reducedGridSize = 10 },
    ]

    @Test(arguments: invalid)
    func validationNamesTheField(_ c: InvalidCase) {
        var configuration = PolicyConfiguration()
        c.mutate(&configuration)
        #expect(configuration.validate().map(\.field) == [c.field])
    }

    @Test func updatesValidationNamesTheField() {
        #expect(UpdatesConfiguration(distanceFilter: -1).validate().map(\.field) == ["distanceFilter"])
        #expect(UpdatesConfiguration(accuracyLimit: 0).validate().map(\.field) == ["accuracyLimit"])
    }

    /// What each power control reaches, written out (ReceiverModel.swift's comment): the per-regime answer the
    /// policy asks for every fix and the set the rest reads must both say it.
    @Test func eachPowerControlReachesItsRegimes() {
        let all = Set(ReceiverRegime.allCases)
        let expected: [PowerControl: [ReceiverConnection: Set<ReceiverRegime>]] = [
            .ubx: [.uart: all, .usb: [.continuous, .powerSave, .standby], .unknown: [.continuous, .powerSave, .standby]],
            .pmtk: [.uart: [.continuous, .powerSave, .standby], .usb: [.continuous, .powerSave, .standby],
                    .unknown: [.continuous, .powerSave, .standby]],
            .sirf: [.uart: [.continuous], .usb: [.continuous], .unknown: [.continuous]],
            .closeDevice: [.uart: [.continuous], .usb: [.continuous], .unknown: [.continuous]],
            .gpio: [.uart: [.continuous, .off], .usb: [.continuous, .off], .unknown: [.continuous, .off]],
            .usbPort: [.uart: [.continuous, .off], .usb: [.continuous, .off], .unknown: [.continuous, .off]],
        ]
        for control in PowerControl.allCases {
            for connection in ReceiverConnection.allCases {
                let set = expected[control]?[connection]
                #expect(ReceiverModel.regimes(reachableBy: control, on: connection) == set, "\(control) on \(connection)")
                var model = ReceiverModel.ublox8
                model.powerControl = control
                model.connection = connection
                model.supportedRegimes = [.continuous, .standby, .off]
                let reachable = (set ?? []).intersection(model.supportedRegimes)
                #expect(model.reachableRegimes == reachable, "\(control) on \(connection)")
                for regime in ReceiverRegime.allCases {
                    #expect(
                        model.reaches(regime) == reachable.contains(regime), "\(control) on \(connection): \(regime)")
                }
            }
        }
    }

    @Test func receiverModelsFallBackToWhatTheyCanDo() {
        #expect(ReceiverModel.switchedNMEA.effectiveRegime(.standby) == .off)
        #expect(ReceiverModel.switchedNMEA.effectiveRegime(.powerSave) == .continuous)
        // No commands and no switch: releasing the device powers nothing down, so every regime is continuous.
        #expect(ReceiverModel.genericNMEA.reachableRegimes == [.continuous])
        #expect(ReceiverModel.genericNMEA.effectiveRegime(.off) == .continuous)
        #expect(ReceiverModel.genericNMEA.current(in: .off) == ReceiverModel.genericNMEA.current.tracking)
        #expect(ReceiverModel.ublox8.effectiveRegime(.powerSave) == .powerSave)
        var model = ReceiverModel.mt3339
        model.supportedRegimes.remove(.standby)
        model.current.tracking = 22
        #expect(model.effectiveRegime(.standby) == .continuous)  // and PMTK has no off a command undoes
        #expect(model.current(in: .continuous) == 22)
        var onUSB = ReceiverModel.ublox8
        onUSB.connection = .usb
        #expect(onUSB.effectiveRegime(.off) == .standby)  // a u-blox on its own USB never reaches backup
        #expect(ReceiverModel.ublox8.effectiveRegime(.off) == .off)  // over its UART it does
        #expect(ReceiverModel.sirf4.reachableRegimes == [.continuous])  // no SiRF commands
        #expect(ReceiverModel.named("sirf4") == .sirf4)
        var broken = ReceiverModel.ublox6
        broken.current.standby = -1
        broken.timeToFirstFix.hot = .nan
        #expect(broken.validate().map(\.field) == ["current.standby", "timeToFirstFix.hot"])
    }

    /// Standby pays its current but keeps a hot start; off pays a warm start unless a backup cell keeps it hot.
    @Test func downRegimeIsTheCheaperForTheSleepAhead() {
        #expect(ReceiverModel.mt3339.cheaperDownRegime(forSleepOf: 600) == .standby)  // PMTK: no off
        #expect(ReceiverModel.ublox8.cheaperDownRegime(forSleepOf: 600) == .off)  // backup cell: off stays hot
        #expect(ReceiverModel.switchedNMEA.cheaperDownRegime(forSleepOf: 600) == .off)  // no standby at all
        #expect(ReceiverModel.genericNMEA.cheaperDownRegime(forSleepOf: 600) == .continuous)  // no way down
        // Off by UBX is backup (RXM-PMREQ): the backup domain is kept, so a hot start at 22 µA beats standby.
        var ublox6 = ReceiverModel.ublox6
        ublox6.backupSupplyWhenOff = false
        #expect(ublox6.cheaperDownRegime(forSleepOf: 10) == .off)
        #expect(ublox6.timeToFirstFix(afterDown: 60, in: .standby) == 1)
        #expect(ublox6.timeToFirstFix(afterDown: 60, in: .off) == 1)
        #expect(ublox6.current(in: .off) == ublox6.current.backup)
        // Switched off by a GPIO line without a backup cell: a cold start, so a short sleep stays up… in standby
        // where the mechanism has one; a switch has none.
        ublox6.powerControl = .gpio
        #expect(ublox6.cheaperDownRegime(forSleepOf: 10) == .off)
        #expect(ublox6.timeToFirstFix(afterDown: 60, in: .off) == 27)
        #expect(ublox6.current(in: .off) == 0)
    }

    /// Standby, or off with a backup supply, keeps the backup domain: hot within the hot window, warm after it.
    /// Off without a backup supply loses time, almanac and ephemeris: cold, however short the sleep.
    @Test func timeToFirstFixFollowsWhatTheWayDownKeeps() {
        var model = ReceiverModel.sirf4
        model.powerControl = .gpio  // off by a switch; standby stays as the model says (not reachable by a switch)
        model.timeToFirstFix = TimeToFirstFix(hot: 1, warm: 20, cold: 40, hotWindow: 3600)
        model.backupSupplyWhenOff = true
        #expect(model.timeToFirstFix(afterDown: 60, in: .standby) == 1)
        #expect(model.timeToFirstFix(afterDown: 7200, in: .standby) == 20)
        #expect(model.timeToFirstFix(afterDown: 60, in: .off) == 1)
        #expect(model.timeToFirstFix(afterDown: 7200, in: .off) == 20)
        model.backupSupplyWhenOff = false
        #expect(model.timeToFirstFix(afterDown: 60, in: .off) == 40)
        var ublox = ReceiverModel.ublox8  // standby by UBX keeps the backup domain without a cell
        ublox.backupSupplyWhenOff = false
        #expect(ublox.timeToFirstFix(afterDown: 60, in: .standby) == ublox.timeToFirstFix.hot)
        // A switch off without a backup supply loses everything: cold.
        #expect(ReceiverModel.switchedNMEA.timeToFirstFix(afterDown: 1, in: .off) == ReceiverModel.switchedNMEA.timeToFirstFix.cold)
    }
}
