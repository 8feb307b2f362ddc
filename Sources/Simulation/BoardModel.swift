/// A computer a tracker runs on, as data: what it draws from its 5 V supply. The receiver's saving is only part
/// of a battery's: a Pi Zero 2 W idles at about 120 mA at 5 V while a u-blox 8 tracks at about 25 mA at
/// 3.3 V, so a receiver at a quarter of always-on stretches the battery by a few percent, not four times.
/// Every figure names its source (docs/policy.md, "The whole board"); a figure nobody measured is nil.
public struct BoardModel: Sendable, Equatable {
    /// The key `--board` takes: `zero2w`, `pi3a+`, `pi4`, `pi5`, `cm4`.
    public var name: String
    public var title: String
    /// mA at 5 V booted headless with nothing running (Wi-Fi up); nil without a cited measurement.
    public var idle: Double?
    /// mA at 5 V, busy: Raspberry Pi's "typical bare-board active current consumption" where it gives one.
    public var active: Double
    /// Where `idle` and `active` come from, by figure name.
    public var sources: [String: String]

    public init(name: String, title: String, idle: Double?, active: Double, sources: [String: String]) {
        (self.name, self.title, self.idle, self.active, self.sources) = (name, title, idle, active, sources)
    }

    /// The board's supply voltage.
    public static let volts = 5.0
    /// The voltage the receiver's currents are counted at: a GNSS module's supply (3.3 V for the modules the
    /// receiver models describe; a USB receiver's regulator draws its current from 5 V, which makes the
    /// receiver's part larger, not the saving's share of the whole).
    public static let receiverVolts = 3.3

    /// The draw an estimate uses: idle where it was measured (a tracker's Pi mostly waits), else the active
    /// figure, which overstates the board and so understates the saving's share of the whole.
    public var assumedDraw: Double { idle ?? active }

    private static let documentation =
        "Raspberry Pi documentation, \"Power supply\": typical bare-board active current consumption"
    private static let sbcReviews = "Jeff Geerling's sbc-reviews on GitHub (web/data/results.yml)"

    public static let builtIn: [BoardModel] = [
        BoardModel(
            name: "zero2w", title: "Raspberry Pi Zero 2 W", idle: 120, active: 350,
            sources: [
                "idle": "CNX Software, \"A deep dive into Raspberry Pi Zero 2 W's power consumption\" (2021-12-09): "
                    + "Raspberry Pi OS Lite Bullseye idle, about 120 mA at 5 V",
                "active": documentation,
            ]),
        BoardModel(name: "pi3a+", title: "Raspberry Pi 3 Model A+", idle: nil, active: 350, sources: ["active": documentation]),
        BoardModel(
            name: "pi4", title: "Raspberry Pi 4 Model B", idle: 320, active: 600,
            sources: [
                "idle": "\(sbcReviews), \"Raspberry Pi 4 model B\": idle power draw 1.6 W at the wall",
                "active": documentation,
            ]),
        BoardModel(
            name: "pi5", title: "Raspberry Pi 5", idle: 560, active: 800,
            sources: [
                "idle": "\(sbcReviews), \"Raspberry Pi 5 model B\": idle power draw 2.8 W at the wall",
                "active": documentation,
            ]),
        // Raspberry Pi's table has no Compute Module: its active figure is the same review's, under stress-ng.
        BoardModel(
            name: "cm4", title: "Raspberry Pi Compute Module 4", idle: 500, active: 920,
            sources: [
                "idle": "\(sbcReviews), \"Raspberry Pi Compute Module 4\": idle power draw 2.5 W at the wall, "
                    + "the carrier board's own draw included",
                "active": "\(sbcReviews), \"Raspberry Pi Compute Module 4\": 4.6 W at the wall under stress-ng",
            ]),
    ]

    public static func named(_ name: String) -> BoardModel? { builtIn.first { $0.name == name } }

    /// The board a device tree's model string names (`/proc/device-tree/model`: "Raspberry Pi 4 Model B Rev
    /// 1.4"), nil for any other.
    public static func detect(deviceTreeModel model: String) -> BoardModel? {
        let prefixes = [
            ("Raspberry Pi Zero 2 W", "zero2w"), ("Raspberry Pi 3 Model A Plus", "pi3a+"),
            ("Raspberry Pi 4 Model B", "pi4"), ("Raspberry Pi 5", "pi5"),
            // Not the CM4S ("Compute Module 4S"), a CM3-shaped module of its own.
            ("Raspberry Pi Compute Module 4 Rev", "cm4"),
        ]
        return prefixes.first { model.hasPrefix($0.0) }.flatMap { named($0.1) }
    }
}

/// A run's charge as the whole system's: the board and the receiver together, against the same board with
/// the receiver always on.
public struct SystemEnergy: Sendable, Equatable {
    public var board: BoardModel
    /// Seconds the run lasted.
    public var seconds: Double
    /// mAh at the receiver's supply: as the run drove it, and always on.
    public var receiver: Double
    public var receiverAlwaysOn: Double

    public init(board: BoardModel, seconds: Double, receiver: Double, alwaysOn: Double) {
        (self.board, self.seconds, self.receiver, receiverAlwaysOn) = (board, seconds, receiver, alwaysOn)
    }

    /// Watt-hours: the board alone over the run, the receiver as the run drove it, and the receiver always on.
    public var boardWh: Double { board.assumedDraw * BoardModel.volts * seconds / 3600 / 1000 }
    public var receiverWh: Double { receiver * BoardModel.receiverVolts / 1000 }
    public var receiverAlwaysOnWh: Double { receiverAlwaysOn * BoardModel.receiverVolts / 1000 }

    public var totalWh: Double { boardWh + receiverWh }
    public var alwaysOnWh: Double { boardWh + receiverAlwaysOnWh }
    /// The whole system's draw as a percentage of the same system with the receiver always on.
    public var percentOfAlwaysOn: Double { alwaysOnWh > 0 ? totalWh / alwaysOnWh * 100 : 100 }
    /// The receiver's alone, for the line that sets them side by side.
    public var receiverPercentOfAlwaysOn: Double { receiverAlwaysOnWh > 0 ? receiverWh / receiverAlwaysOnWh * 100 : 100 }

    /// Hours a battery of `wattHours` lasts at the run's average draw, and with the receiver always on.
    public func batteryHours(_ wattHours: Double) -> (run: Double, alwaysOn: Double) {
        let hours = seconds / 3600
        guard hours > 0, totalWh > 0, alwaysOnWh > 0 else { return (0, 0) }
        return (wattHours / (totalWh / hours), wattHours / (alwaysOnWh / hours))
    }
}
