import Capture
import GPSD
import GPSModel
import Lodestar
import Policy
import Receivers
import Synchronization
import SystemInterface
import Testbed

/// `lodestar demo --profile NAME`: the whole of Lodestar without hardware. An emulated receiver (Testbed's
/// `EmulatedReceiver`, of the kind the profile's power control drives) plays the capture behind a private
/// gpsd; a `LocationManager` runs the profile against that gpsd and powers the receiver with real commands;
/// the locations it delivers are printed, what power control did goes to stderr, and at the end the charge
/// the receiver drew is set against running it all the time.
enum PoweredDemo {
    static func run(
        contents: CaptureContents, captureName: String, profile: Profile, speed: Double, options: WatchOptions,
        context: CommandContext
    ) -> ExitCode {
        let personality: EmulatedReceiver.Personality
        switch profile.receiver.powerControl {
        case .ubx: personality = .ublox8
        case .pmtk: personality = .mtk3339
        case .gpio, .usbPort, .closeDevice, .sirf: personality = .genericNMEA
        }
        let connection = profile.receiver.connection == .unknown ? ReceiverConnection.usb : profile.receiver.connection
        let gpsd: PrivateGPSD
        let receiver: EmulatedReceiver
        do {
            (gpsd, receiver) = try PrivateGPSD.startReading(
                {
                    try EmulatedReceiver(
                        capture: contents, personality: personality, model: profile.receiver, speed: speed,
                        connection: connection)
                }, terminal: \.terminal, discard: { $0.stop() })
        } catch {
            context.say("lodestar demo: \(error)")
            return .unavailable
        }
        defer {
            receiver.stop()
            gpsd.stop()
        }
        var setup = ReceiverPowerSetup(connection: connection)
        if [.gpio, .usbPort].contains(profile.receiver.powerControl) {
            setup.mechanism = profile.receiver.powerControl
            setup.powerSwitch = EmulatedPowerSwitch(receiver: receiver, description: "emulated enable line")
        }
        context.say(
            "lodestar demo: \(captureName) played by an emulated \(personality.rawValue) receiver on \(connection.rawValue)"
                + " behind a private gpsd on port \(gpsd.port), at \(TextLine.fixed(speed, decimals: 0, width: 1))x;"
                + " profile \(profile.name) powers it")
        let manager = LocationManager(
            source: .gpsd(host: "127.0.0.1", port: String(gpsd.port), device: receiver.devicePath), profile: profile,
            power: setup, clockRate: speed)
        let inbox = DemoInbox()
        let updates = manager.updates
        let reader = Task {
            for await update in updates { inbox.post(update) }
            inbox.finish()
        }
        if profile.updatesEnabled { manager.startUpdatingLocation(profile.updates) }
        if profile.significantChange { manager.startMonitoringSignificantLocationChanges() }
        receiver.start()

        var emitter = LocationEmitter(
            format: options.format, count: options.count, context: context, name: "lodestar demo", origin: .live,
            announcesStream: false)
        emitter.open()
        let playStart = monotonicSeconds()
        var shutDown = false
        while true {
            let (taken, finished) = inbox.take()
            for update in taken { show(update, emitter: &emitter, context: context) }
            if finished { break }
            let timeUp = options.duration.map { monotonicSeconds() - playStart >= $0 } ?? false
            if !shutDown, receiver.isFinished || emitter.finished || context.shouldStop() || timeUp {
                shutDown = true
                manager.shutdown()
            }
            sleepSeconds(0.02)
        }
        reader.cancel()
        emitter.close()
        let end = receiver.clock
        let drawn = receiver.energyMilliampHours(until: end)
        let start = contents.lines.first?.t ?? 0
        let alwaysOn = profile.receiver.current.tracking * max(end - start, 0) / 3600
        let share = alwaysOn > 0 ? drawn / alwaysOn * 100 : 0
        context.say(
            "lodestar demo: the receiver drew \(TextLine.fixed(drawn, decimals: 2, width: 1)) mAh over "
                + "\(TextLine.fixed((end - start) / 60, decimals: 1, width: 1)) min; always on it would have drawn "
                + "\(TextLine.fixed(alwaysOn, decimals: 2, width: 1)) mAh (\(TextLine.fixed(share, decimals: 0, width: 1)) %)")
        return emitter.outcome
    }

    private static func show(_ update: LocationUpdate, emitter: inout LocationEmitter, context: CommandContext) {
        switch update {
        case .locations(let locations):
            for location in locations { emitter.print(location) }
        case .power(let event):
            context.say("lodestar demo: power: \(event.kind.rawValue): \(event.detail)")
        case .regime(let regime, let reason):
            context.say("lodestar demo: regime \(regime.rawValue): \(reason)")
        case .event(let kind, let detail):
            context.say("lodestar demo: \(kind.name): \(detail)")
        case .noFix(let notice):
            context.say("lodestar demo: \(notice.sentence)")
        case .transmitted:
            break
        }
    }
}

/// Updates handed from the manager's sequence to the command's thread.
private final class DemoInbox: Sendable {
    private let state = Mutex<(updates: [LocationUpdate], finished: Bool)>(([], false))

    func post(_ update: LocationUpdate) { state.withLock { $0.updates.append(update) } }
    func finish() { state.withLock { $0.finished = true } }

    func take() -> ([LocationUpdate], Bool) {
        state.withLock { state in
            defer { state.updates.removeAll() }
            return (state.updates, state.finished)
        }
    }
}
