/// How a receiver is powered down and up: which `ReceiverControl` turns the policy's regimes into commands
/// (docs/profiles.md). The policy only needs the regimes this allows.
public enum PowerControl: String, Sendable, Hashable, CaseIterable {
    /// Nothing but closing the device: gpsd stops reading, the receiver may keep drawing current.
    case closeDevice
    /// u-blox UBX: CFG-RST GNSS stop/start, RXM-PMREQ backup, CFG-RXM/CFG-PM2 (CFG-PM-* on M9/M10) power save.
    case ubx
    /// MediaTek PMTK: PMTK161 standby, PMTK225 periodic / AlwaysLocate.
    case pmtk
    /// SiRF binary: hibernate, TricklePower, push-to-fix.
    case sirf
    /// A GPIO line driving the receiver's enable pin or a load switch.
    case gpio
    /// USB port power (uhubctl on a hub with per-port switching).
    case usbPort
}

/// Supply current, in mA, in each receiver state (docs/contract.md §9).
public struct ReceiverCurrents: Sendable, Hashable {
    /// Searching for satellites: after a power-up until the first fix.
    public var acquisition: Double
    /// Continuous navigation with a fix.
    public var tracking: Double
    /// The receiver's own cycling (`ReceiverRegime.powerSave`).
    public var powerSave: Double
    /// Not navigating, ephemeris and time kept (`ReceiverRegime.standby`).
    public var standby: Double
    /// Backup domain only (RTC and battery-backed RAM): a state below standby that receiver power control
    /// may use; no policy regime charges it.
    public var backup: Double
    /// Powered off (`ReceiverRegime.off`).
    public var off: Double

    public init(acquisition: Double, tracking: Double, powerSave: Double, standby: Double, backup: Double, off: Double)
    {
        (self.acquisition, self.tracking, self.powerSave, self.standby, self.backup, self.off)
            = (acquisition, tracking, powerSave, standby, backup, off)
    }
}

/// Time to first fix, in seconds (docs/contract.md §9).
public struct TimeToFirstFix: Sendable, Hashable {
    /// Ephemeris, time and position kept.
    public var hot: Double
    /// Almanac and time kept, ephemeris expired: waits for an ephemeris broadcast (every 30 s).
    public var warm: Double
    /// Nothing kept: a start after the receiver lost its memory. The policy and the simulation never use it
    /// (see `timeToFirstFix(afterDown:in:)`); it is for receiver power control, after a power cut.
    public var cold: Double
    /// How long the receiver stays hot while down (standby or backup): the ephemeris' useful life.
    public var hotWindow: Double

    public init(hot: Double, warm: Double, cold: Double, hotWindow: Double) {
        self.hot = hot
        self.warm = warm
        self.cold = cold
        self.hotWindow = hotWindow
    }
}

/// One make of receiver as data: what it can do and what it costs. Every field is a plain `var` so a profile
/// can override any of them.
public struct ReceiverModel: Sendable, Hashable {
    /// The key profiles use: `generic-nmea`, `ublox6`, `ublox8`, `mt3339`, `sirf4`.
    public var name: String
    public var powerControl: PowerControl
    /// Regimes the receiver can be put in. `continuous` and `off` are always possible (off may only mean the
    /// device is closed); a regime missing here falls back: `powerSave` → `continuous`, `standby` → `off`.
    public var supportedRegimes: Set<ReceiverRegime>
    public var current: ReceiverCurrents
    public var timeToFirstFix: TimeToFirstFix
    /// Whether a battery or capacitor keeps the backup domain (RTC, ephemeris) while main power is off, so a
    /// start within the hot window is hot even after `off` (Adafruit's CR1220, SparkFun's rechargeable cell).
    public var backupSupplyWhenOff: Bool
    /// How the receiver is wired, which with `powerControl` decides the regimes it can reach
    /// (`reachableRegimes`). Live, the runtime reads it from the device name unless a profile sets it.
    public var connection: ReceiverConnection
    /// Where each figure comes from, by its profile key (`current.tracking`, `timeToFirstFix.hot`, …). A
    /// figure with no entry is unverified (`source(of:)`).
    public var sources: [String: String]

    public init(
        name: String, powerControl: PowerControl, supportedRegimes: Set<ReceiverRegime>, current: ReceiverCurrents,
        timeToFirstFix: TimeToFirstFix, backupSupplyWhenOff: Bool, connection: ReceiverConnection = .unknown,
        sources: [String: String] = [:]
    ) {
        self.name = name
        self.powerControl = powerControl
        self.supportedRegimes = supportedRegimes
        self.current = current
        self.timeToFirstFix = timeToFirstFix
        self.backupSupplyWhenOff = backupSupplyWhenOff
        self.connection = connection
        self.sources = sources
    }

    /// Where the figure under `key` comes from, or `unverified`.
    public func source(of key: String) -> String { sources[key] ?? "unverified" }

    /// The regimes `powerControl` can put the receiver in on `connection`, whatever the receiver supports:
    /// - UBX: backup (`off`) only over the UART: over its own USB port a u-blox does not enter backup, and
    ///   USB traffic would not wake it (docs/power-control.md);
    /// - PMTK: no `off` a command can undo (PMTK225,4 backup is left only by a pin);
    /// - SiRF: no commands are sent (hardware.md says why), so it runs;
    /// - a GPIO line or USB port power: on or off;
    /// - closing the device (release through gpsd): on only. A closed tty powers nothing down (a USB receiver
    ///   stays on the bus's power, a UART one on the board's), so releasing the watch would save no charge and
    ///   only churn gpsd: the receiver runs and the policy filters what it delivers.
    public static func regimes(reachableBy powerControl: PowerControl, on connection: ReceiverConnection)
        -> Set<ReceiverRegime>
    {
        Set(ReceiverRegime.allCases.filter { reaches($0, by: powerControl, on: connection) })
    }

    /// Whether `powerControl` on `connection` can put the receiver in `regime` (`regimes(reachableBy:on:)`,
    /// one regime at a time: the policy asks this for every fix, where building sets cost a tenth of the
    /// daemon's instructions).
    public static func reaches(
        _ regime: ReceiverRegime, by powerControl: PowerControl, on connection: ReceiverConnection
    ) -> Bool {
        switch (powerControl, regime) {
        case (_, .continuous): true
        case (.ubx, .off): connection == .uart
        case (.ubx, .powerSave), (.ubx, .standby), (.pmtk, .powerSave), (.pmtk, .standby): true
        case (.gpio, .off), (.usbPort, .off): true
        default: false
        }
    }

    /// The regimes the policy may use: those the receiver supports that its power control reaches on its
    /// connection, and always `continuous`.
    public var reachableRegimes: Set<ReceiverRegime> { Set(ReceiverRegime.allCases.filter(reaches)) }

    /// Whether `regime` is one of `reachableRegimes`.
    public func reaches(_ regime: ReceiverRegime) -> Bool {
        regime == .continuous
            || (supportedRegimes.contains(regime) && Self.reaches(regime, by: powerControl, on: connection))
    }

    /// The regime the receiver actually runs when asked for `regime`: the nearest reachable one, down to up
    /// (a missing `off` is standby, a missing standby is off, and neither is running).
    public func effectiveRegime(_ regime: ReceiverRegime) -> ReceiverRegime {
        if reaches(regime) { return regime }
        switch regime {
        case .powerSave: return .continuous
        case .standby: return reaches(.off) ? .off : .continuous
        case .off: return reaches(.standby) ? .standby : .continuous
        case .continuous: return .continuous
        }
    }

    /// Whether the receiver's current when "down" is unknown because nothing can power it down: it has no power
    /// commands and no switch (closing the device through gpsd only). It is never taken down, and all its time
    /// is charged at the tracking current: no saving is claimed that was not made.
    public var offCurrentUnknown: Bool { powerControl == .closeDevice }

    /// Steady current (mA) in a regime once it is reached (acquisition is charged separately by a simulator).
    /// `off` by UBX is backup (RXM-PMREQ): the backup domain's current; by a switch, the off current.
    public func current(in regime: ReceiverRegime) -> Double {
        switch effectiveRegime(regime) {
        case .continuous: current.tracking
        case .powerSave: current.powerSave
        case .standby: current.standby
        case .off:
            switch powerControl {
            case .ubx: current.backup
            case .closeDevice: current.tracking
            case .pmtk, .sirf, .gpio, .usbPort: current.off
            }
        }
    }

    /// Seconds to the first fix after being down `downFor` seconds in `regime`. A regime that keeps the
    /// backup domain (standby; backup by command; a released device that kept running; off with a backup
    /// supply) keeps time, almanac and ephemeris: hot within the hot window, warm after it (the ephemeris has
    /// aged out). Off without a backup supply loses them all: cold.
    public func timeToFirstFix(afterDown downFor: Double, in regime: ReceiverRegime) -> Double {
        let effective = effectiveRegime(regime)
        let offByCommand = effective == .off && powerControl == .ubx
        let keepsBackupDomain = effective == .standby || offByCommand || backupSupplyWhenOff
        guard keepsBackupDomain else { return timeToFirstFix.cold }
        return downFor <= timeToFirstFix.hotWindow ? timeToFirstFix.hot : timeToFirstFix.warm
    }

    /// Which of two ways down is cheaper for a sleep of `seconds`: standby (pays its current, keeps a hot start)
    /// or off (pays nothing while down but a warm or cold instead of a hot start at acquisition current).
    public func cheaperDownRegime(forSleepOf seconds: Double) -> ReceiverRegime {
        let reachable = reachableRegimes
        guard reachable.contains(.standby) else { return effectiveRegime(.off) }
        guard reachable.contains(.off) else { return .standby }
        let standbyCost = current.standby * seconds + current.acquisition * timeToFirstFix.hot
        let offCost = current(in: .off) * seconds + current.acquisition * timeToFirstFix(afterDown: seconds, in: .off)
        return standbyCost <= offCost ? .standby : .off
    }
}

extension ReceiverModel {
    /// `genericNMEA` behind a power switch (a GPIO enable line or a load switch): on, or off with no supply.
    public static var switchedNMEA: ReceiverModel {
        var model = genericNMEA
        model.powerControl = .gpio
        return model
    }

    /// Any NMEA receiver behind gpsd with no known power commands: it runs, unless a power switch is configured
    /// (powerControl `gpio` or `usbPort`: GPIO load switch, uhubctl), which turns it off. Every figure is
    /// typical, unverified: it depends on the receiver. `current.off` 0 is the switched-off receiver's.
    public static let genericNMEA = ReceiverModel(
        name: "generic-nmea", powerControl: .closeDevice, supportedRegimes: [.continuous, .off],
        current: ReceiverCurrents(
            acquisition: 45,  // typical, unverified (between the MT3339's 25 mA and the NEO-6's 50–60 mA)
            tracking: 35,  // typical, unverified
            powerSave: 35,  // not supported: same as tracking
            standby: 35,  // not supported: same as tracking
            backup: 0,  // typical, unverified: assume no backup battery
            off: 0),  // assumes a power switch (see above)
        timeToFirstFix: TimeToFirstFix(
            hot: 2,  // typical, unverified
            warm: 32,  // typical, unverified
            cold: 35,  // typical, unverified (Linx R4 / HI-203E manuals quote 35–40 s for their chips)
            hotWindow: 0),  // no backup domain assumed: every start after off is cold
        backupSupplyWhenOff: false)

    /// u-blox 6 and 7 (NEO-6M, NEO-7M boards).
    public static let ublox6 = ReceiverModel(
        name: "ublox6", powerControl: .ubx, supportedRegimes: [.continuous, .powerSave, .standby, .off],
        current: ReceiverCurrents(
            acquisition: 55,
            tracking: 40,
            powerSave: 14.5,
            standby: 9.4,
            backup: 0.022,  // typical, unverified (NEO-6 datasheet backup figure from recall)
            off: 0),
        timeToFirstFix: TimeToFirstFix(
            hot: 1,
            warm: 27,  // typical, unverified (u-blox 6 quotes warm ≈ cold without aiding)
            cold: 27,
            hotWindow: 4 * 3600),  // typical, unverified for u-blox 6 (SparkFun states 4 h for u-blox 8/9)
        backupSupplyWhenOff: true, connection: .uart,
        sources: [
            "current.off": "switched off: no supply, so no current (by definition)",
            "current.acquisition": "ukhas.org.uk guides:ublox_psm: \"around 50–60 mA to get a lock\"",
            "current.tracking": "ukhas.org.uk guides:ublox_psm: \"around 40 mA with a lock\"",
            "current.powerSave": "ukhas.org.uk guides:ublox_psm: 1 s cyclic 14–15 mA (3.3 V module)",
            "current.standby": "GY-NEO6MV2 board measured 8–10.8 mA \"standby\" (Nestpebble/NiceRa, INA3221)",
            "timeToFirstFix.hot": "NEO-6M module listings ≈ 1 s",
            "timeToFirstFix.cold": "NEO-6M module listings ≈ 27 s",
        ])  // NEO-6M boards carry a rechargeable backup cell (Waveshare UART GPS NEO-6M)

    /// u-blox 8, M9 and M10 (NEO-M8N, SAM-M8Q, NEO-M9N, MAX-M10S). Over USB the module never reaches its
    /// lowest state (NEO-M9N integration manual §3.11.2.3.3), so standby is a board figure, not the chip's.
    public static let ublox8 = ReceiverModel(
        name: "ublox8", powerControl: .ubx, supportedRegimes: [.continuous, .powerSave, .standby, .off],
        current: ReceiverCurrents(
            acquisition: 32,
            tracking: 29,
            powerSave: 9.5,
            standby: 5.4,
            backup: 0.015,
            off: 0),
        timeToFirstFix: TimeToFirstFix(
            hot: 2,
            warm: 25,  // typical, unverified
            cold: 29,
            hotWindow: 4 * 3600),
        backupSupplyWhenOff: true, connection: .uart,
        sources: [
            "current.off": "switched off: no supply, so no current (by definition)",
            "current.acquisition": "SAM-M8Q data sheet UBX-16012619 Table 8: 32 mA GPS+GLONASS acquisition (3.0 V)",
            "current.tracking": "SAM-M8Q data sheet Table 8: 29 mA GPS+GLONASS tracking",
            "current.powerSave": "SAM-M8Q data sheet Table 8: 9.5 mA power save mode, 1 Hz",
            "current.standby": "BE-180/BE-252Q (M10050) boards measured 5.2–5.6 mA \"standby\" (Nestpebble/NiceRa)",
            "current.backup": "SAM-M8Q data sheet: backup 15–20 µA",
            "timeToFirstFix.hot": "SparkFun NEO-M9N hookup guide: \"two second\" hot start (M8U: about 1.5 s)",
            "timeToFirstFix.cold": "SparkFun NEO-M9N hookup guide: \"~29 seconds\" (M8U: ~26 s)",
            "timeToFirstFix.hotWindow": "SparkFun NEO-M9N hookup guide: hot start \"lasts for four hours\"",
        ])  // SparkFun NEO-M9N / NEO-M8U boards: rechargeable backup battery

    /// MediaTek MT3339 (GlobalTop PA6H, Adafruit Ultimate GPS).
    public static let mt3339 = ReceiverModel(
        name: "mt3339", powerControl: .pmtk, supportedRegimes: [.continuous, .powerSave, .standby, .off],
        current: ReceiverCurrents(
            acquisition: 25,
            tracking: 20,
            powerSave: 8,  // typical, unverified (PMTK225 periodic standby; depends on run/sleep times)
            standby: 2,
            backup: 0.007,
            off: 0),
        timeToFirstFix: TimeToFirstFix(
            hot: 4,
            warm: 7,
            cold: 35,  // typical, unverified (PA6H data sheet figure from recall)
            hotWindow: 2 * 3600),  // typical, unverified (ephemeris useful for about 2–4 h)
        backupSupplyWhenOff: false, connection: .uart,
        sources: [
            "current.off": "switched off: no supply, so no current (by definition)",
            "current.acquisition": "forums.adafruit.com t=45252: \"20–25 mA (active)\"; upper end for acquisition",
            "current.tracking": "forums.adafruit.com t=45252: lower end of \"20–25 mA (active)\"",
            "current.standby": "forums.adafruit.com t=45252: \"2 mA standby\" after PMTK161",
            "current.backup": "learn.adafruit.com adafruit-ultimate-gps/battery-backup: RTC backup draws 7 µA",
            "timeToFirstFix.hot": "forums.adafruit.com t=45252: \"hot-start lock < 4 sec\" (measured)",
            "timeToFirstFix.warm": "forums.adafruit.com t=45252: \"warm-start lock < 7 sec\" (measured, standby wake)",
        ])  // Adafruit: the CR1220 holder ships without a battery

    /// SiRFstarIV (GSD4e: BU-353-S4 USB puck, Maestro A2100).
    public static let sirf4 = ReceiverModel(
        name: "sirf4", powerControl: .sirf, supportedRegimes: [.continuous, .powerSave, .standby, .off],
        current: ReceiverCurrents(
            acquisition: 33.6,
            tracking: 18.5,
            powerSave: 4.6,
            standby: 0.0235,
            backup: 0.0235,  // same: hibernate is SiRF's backup state
            off: 0),
        timeToFirstFix: TimeToFirstFix(
            hot: 1,
            warm: 32,  // typical, unverified
            cold: 35,
            hotWindow: 2 * 3600),
        backupSupplyWhenOff: false, connection: .usb,
        sources: [
            "current.off": "switched off: no supply, so no current (by definition)",
            "current.acquisition": "Maestro A2100-A user's manual Table 7: full power searching, average",
            "current.tracking": "Maestro A2100-A Table 7: full power tracking, average",
            "current.powerSave": "Maestro A2100-A Table 7: TricklePower mode",
            "current.standby": "Maestro A2100-A Table 7: hibernate 23.5 µA (RTC and SRAM kept)",
            "timeToFirstFix.hot": "Linx RXM-GPS-R4 (SiRFstarIV) manual: hot start 1 s",
            "timeToFirstFix.cold": "Linx RXM-GPS-R4 manual: cold start 35–40 s",
            "timeToFirstFix.hotWindow": "Linx RXM-GPS-R4 manual: hot when shut down \"for less than 2 hours\"",
        ])  // typical, unverified (a USB puck loses everything with its port power)

    /// The built-in models, by `name`.
    public static let builtIn: [ReceiverModel] = [genericNMEA, ublox6, ublox8, mt3339, sirf4]

    public static func named(_ name: String) -> ReceiverModel? { builtIn.first { $0.name == name } }

    /// Every problem, each naming its key path, empty when valid.
    public func validate() -> [ConfigurationError] {
        var errors: [ConfigurationError] = []
        if name.isEmpty { errors.append(.init("name", "must not be empty")) }
        errors += ConfigurationNumber.problems(Self.numbers, in: self)
        return errors
    }
}
