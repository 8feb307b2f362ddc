import Capture
import Daemon
import Simulation
import GPSD
import GPSModel
import Lodestar
import Policy
import Receivers
import Synchronization
import SystemInterface
import ReceiverEmulation

/// `lodestar demo --profile NAME`: the whole of Lodestar without hardware. An emulated receiver (ReceiverEmulation's
/// `EmulatedReceiver`, of the kind the profile's power control drives) plays the capture behind a private
/// gpsd; a `LocationManager` runs the profile against that gpsd and powers the receiver with real commands;
/// the locations it delivers are printed, what power control did goes to stderr, and at the end the charge
/// the receiver drew is set against running it all the time.
enum PoweredDemo {
    static func run(
        contents: CaptureContents, captureName: String, profile: Profile, speed: Double, options: WatchOptions,
        system: (board: BoardModel, batteryWh: Double?)?, context: CommandContext
    ) -> ExitCode {
        let personality: EmulatedReceiver.Personality
        switch profile.receiver.powerControl {
        case .ubx: personality = .ublox8
        case .pmtk: personality = .mtk3339
        case .gpio, .usbPort, .closeDevice, .sirf: personality = .genericNMEA
        }
        let connection = profile.receiver.connection == .unknown ? ReceiverConnection.usb : profile.receiver.connection
        guard
            let (gpsd, receiver) = context.startPrivateGPSD(
                {
                    try EmulatedReceiver(
                        capture: contents, personality: personality, model: profile.receiver, speed: speed,
                        connection: connection)
                }, terminal: \.terminal, discard: { $0.stop() }, failurePrefix: "lodestar demo: ")
        else { return .unavailable }
        defer {
            receiver.stop()
            gpsd.stop()
        }
        var power = ReceiverPowerSetup(connection: connection)
        if [.gpio, .usbPort].contains(profile.receiver.powerControl) {
            power.mechanism = profile.receiver.powerControl
            power.powerSwitch = EmulatedPowerSwitch(receiver: receiver, description: "emulated enable line")
        }
        context.say(
            "lodestar demo: \(captureName) played by an emulated \(personality.rawValue) receiver on \(connection.rawValue)"
                + " behind a private gpsd on port \(gpsd.port), at \(TextLine.fixed(speed, decimals: 0, width: 1))x;"
                + " lodestar run powers it with profile \(profile.name)")
        guard let directory = TemporaryDirectory(prefix: "lodestar-demo") else {
            context.say("lodestar demo: cannot make a temporary directory for the service's state")
            return .cannotCreate
        }
        defer { directory.remove() }
        // The service as `lodestar run` runs it, with its state in a temporary directory and the terminal as
        // its only output.
        var configuration = DaemonConfiguration()
        configuration.profile = profile.name
        configuration.gpsd.host = "127.0.0.1"
        configuration.gpsd.port = String(gpsd.port)
        configuration.gpsd.device = receiver.devicePath
        configuration.outputs = DaemonConfiguration.OutputSettings()
        configuration.outputs.jsonl = nil
        configuration.outputs.gpx = nil
        configuration.outputs.socket = nil
        configuration.stateDirectory = directory.path + "/state"
        configuration.runtimeDirectory = directory.path + "/run"

        var emitter = LocationEmitter(
            format: options.format, count: options.count, context: context, name: "lodestar demo", origin: .live,
            announcesStream: false)
        emitter.open()
        let terminal = EmitterOutput(emitter: emitter)
        let playStart = monotonicSeconds()
        var deliveries: [Location] = []
        var hooks = DaemonService.Hooks(
            logger: Logger(label: "lodestar demo") { context.say(LogLineFormat(priorityPrefix: false).line($0)) },
            makeOutputs: { _ in [terminal] },
            shouldStop: {
                let timeUp = options.duration.map { monotonicSeconds() - playStart >= $0 } ?? false
                return receiver.isFinished || terminal.emitter.finished || context.shouldStop() || timeUp
            })
        hooks.observe = { update in
            if case .locations(let locations) = update { deliveries += locations }
        }
        receiver.start()
        let service = DaemonService(
            setup: DaemonSetup(configuration: configuration, profile: profile, power: power, clockRate: speed),
            hooks: hooks)
        switch service.runUntilStopped() {
        case .stopped: break
        case .cannotCreate(let problem):
            context.say("lodestar demo: \(problem)")
            return .cannotCreate
        }
        terminal.emitter.close()
        let end = receiver.clock
        let drawn = receiver.energyMilliampHours(until: end)
        let start = contents.lines.first?.t ?? 0
        let alwaysOn = profile.receiver.current.tracking * max(end - start, 0) / 3600
        let share = alwaysOn > 0 ? drawn / alwaysOn * 100 : 0
        context.say(
            "lodestar demo: the receiver drew \(TextLine.fixed(drawn, decimals: 2, width: 1)) mAh over "
                + "\(TextLine.fixed((end - start) / 60, decimals: 1, width: 1)) min; always on it would have drawn "
                + "\(TextLine.fixed(alwaysOn, decimals: 2, width: 1)) mAh (\(TextLine.fixed(share, decimals: 0, width: 1)) %)")
        if let system {
            let energy = SystemEnergy(board: system.board, seconds: max(end - start, 0), receiver: drawn, alwaysOn: alwaysOn)
            context.say("lodestar demo: " + EvaluationFormat.systemLine(energy, batteryWh: system.batteryWh))
        }
        let estimate = service.estimatedCharge
        context.say(
            "lodestar demo: lodestar run estimated \(TextLine.fixed(estimate.charge, decimals: 2, width: 1)) mAh against "
                + "\(TextLine.fixed(estimate.alwaysOn, decimals: 2, width: 1)) mAh always on, from what power control saw "
                + "the receiver do and the profile's currents")
        if let staleness = DemoStaleness(contents: contents, until: end, delivered: deliveries) {
            context.say(
                "lodestar demo: staleness (true position to the last delivered location, \(staleness.truePoints) true fixes):"
                    + " p95 \(TextLine.fixed(staleness.figures.p95, decimals: 0, width: 1)) m,"
                    + " max \(TextLine.fixed(staleness.figures.max, decimals: 0, width: 1)) m;"
                    + " the profile's bound is \(TextLine.fixed(profile.stalenessBound, decimals: 0, width: 1)) m")
        }
        return terminal.emitter.outcome
    }

}

/// The demo's terminal as one of the service's outputs: locations through `watch`'s printer.
private final class EmitterOutput: TrackOutput {
    var emitter: LocationEmitter
    let name = "terminal"

    init(emitter: LocationEmitter) { self.emitter = emitter }

    func write(_ record: TrackRecord, now: UTCTime) throws(OutputFailure) {
        if case .location(let location) = record { emitter.print(location) }
    }

    func tick(now: UTCTime) throws(OutputFailure) {}
    func close() {}
}

/// Staleness of what the service delivered live, against the capture as the true track: at each true fix
/// the emulator played, the distance to the last location delivered by then (matched by receiver time).
struct DemoStaleness {
    var figures: RunFigures.Staleness
    var truePoints: Int

    init?(contents: CaptureContents, until end: Double, delivered: [Location]) {
        let truth = TrueTrack(contents)
        let played = truth.points.filter { $0.t <= end }
        guard !played.isEmpty else { return nil }
        var times: [UTCTime: Double] = [:]
        for point in played { times[point.location.timestamp] = point.t }
        let deliveries = delivered.compactMap { location in times[location.timestamp].map { ($0, location) } }
        let result = EvaluationMath.staleness(
            truth: TrueTrack(points: played), deliveries: deliveries, bound: .infinity)
        figures = result.0
        truePoints = played.count
    }
}
