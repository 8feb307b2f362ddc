// receiver-emulator: ReceiverEmulation's emulated receiver as a process of its own, for the VM rig
// (scripts/vm-test), where the receiver must live on the host while gpsd and Lodestar run in the guest. It
// plays a capture on a pty as the receiver a profile's power control drives (the same choice as `lodestar demo
// --profile`), obeys the commands that reach it, and reports the charge it drew. Test infrastructure: it is
// not part of the `lodestar` product or the Debian package.
//
//   receiver-emulator --profile NAME --capture FILE.capture [--speed N] [--connection usb|uart]
//                     [--personality ublox8|mtk3339|genericNMEA]
//
// --personality plays another receiver than the profile's (its model's currents too): the rig swaps a u-blox
// for a MediaTek on the same cable to show the commands each one gets.
//
// stdout: `device /dev/pts/N` first; then, on SIGUSR1 and once more on SIGTERM or SIGINT (before exiting 0),
// one JSON line: the emulator's clock, the charge drawn, the charge always-on would have drawn, its power
// state and the commands heard so far.
// SIGUSR2 cuts the receiver's supply and SIGHUP restores it: a USB receiver is powered by its cable, so the rig
// sends them when it unplugs and plugs it, and a replugged receiver starts again from power-up, its
// configuration lost, as a real one does.
import Capture
import Lodestar
import Policy
import Receivers
import Synchronization
import SystemInterface
import ReceiverEmulation

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String, _ code: Int32) -> Never {
    var text = "receiver-emulator: \(message)\n"
    text.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    exit(code)
}

func say(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { _ = Glibc.write(1, $0.baseAddress, $0.count) }
}

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard name.hasPrefix("--"), let value = arguments.popFirst() else { fail("usage: see the header of main.swift", 64) }
    options[String(name.dropFirst(2))] = value
}
guard let profileName = options["profile"], let profile = ProfileStore.builtIn(profileName) else {
    fail("--profile must name a built-in profile", 64)
}
guard let capturePath = options["capture"] else { fail("--capture must name a capture file", 64) }
let bytes: [UInt8]
do throws(SystemError) { bytes = try readWholeFile(capturePath) } catch { fail("\(capturePath): \(error.reason)", 66) }
let contents: CaptureContents
do { contents = try CaptureReader.read(bytes) } catch { fail("\(capturePath): \(error)", 65) }
let speed = options["speed"].flatMap(Double.init) ?? 1
guard speed > 0, speed <= 1000 else { fail("--speed must be above 0 and at most 1000", 64) }
let connection: ReceiverConnection
switch options["connection"] ?? "usb" {
case "usb": connection = .usb
case "uart": connection = .uart
default: fail("--connection must be usb or uart", 64)
}
/// The profile's receiver, or the one --personality names with its model's currents.
@MainActor func chosenReceiver() -> (EmulatedReceiver.Personality, ReceiverModel) {
    let own: EmulatedReceiver.Personality
    switch profile.receiver.powerControl {
    case .ubx: own = .ublox8
    case .pmtk: own = .mtk3339
    case .gpio, .usbPort, .closeDevice, .sirf: own = .genericNMEA
    }
    guard let name = options["personality"] else { return (own, profile.receiver) }
    guard let chosen = EmulatedReceiver.Personality(rawValue: name) else {
        fail("--personality takes \(EmulatedReceiver.Personality.allCases.map(\.rawValue).joined(separator: "|")), not '\(name)'", 64)
    }
    guard chosen != own else { return (own, profile.receiver) }
    var model: ReceiverModel
    switch chosen {
    case .ublox8: model = .ublox8
    case .mtk3339: model = .mt3339
    case .genericNMEA: model = .genericNMEA
    }
    model.connection = connection
    return (chosen, model)
}
let (personality, model) = chosenReceiver()

let receiver: EmulatedReceiver
do {
    receiver = try EmulatedReceiver(
        capture: contents, personality: personality, model: model, speed: speed, connection: connection)
} catch { fail("cannot open a pty: \(error)", 71) }

/// The signals in the order they came: the handler writes each one's number to a pipe (write is
/// async-signal-safe) and the loop reads them. One pending slot lost a SIGHUP that the rig's next SIGUSR1
/// followed within the loop's 50 ms, and the receiver stayed without supply.
let signalPipe: (read: Int32, write: Int32) = {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { fail("cannot make a pipe for the signals", 71) }
    for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
    return (ends[0], ends[1])
}()

for number in [SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP] {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { number in
        var byte = UInt8(truncatingIfNeeded: number)
        _ = write(signalPipe.write, &byte, 1)
    }
    sigemptyset(&action.sa_mask)
    sigaction(number, &action, nil)
}
signal(SIGPIPE, SIG_IGN)

say("device \(receiver.devicePath)")
let start = contents.lines.first?.t ?? 0
receiver.start()

func report() {
    let now = receiver.clock
    let drawn = receiver.energyMilliampHours(until: now)
    let alwaysOn = model.current.tracking * max(now - start, 0) / 3600
    let commands = receiver.commands.map { command -> String in
        let name: String
        switch command.message {
        case .ubx(let frame):
            name = "UBX \(frame.messageClass)/\(frame.id)"
        case .pmtk(let sentence):
            name = "PMTK\(sentence.command)"
        }
        return "{\"t\":\(command.t),\"command\":\"\(name)\",\"ignored\":\(command.ignored)}"
    }
    say(
        "{\"clock\":\(now - start),\"receiverMilliampHours\":\(drawn),\"alwaysOnMilliampHours\":\(alwaysOn),"
            + "\"personality\":\"\(personality.rawValue)\",\"state\":\"\(receiver.powerState.rawValue)\","
            + "\"finished\":\(receiver.isFinished),\"commands\":[\(commands.joined(separator: ","))]}")
}

while true {
    sleepSeconds(0.05)
    var byte: UInt8 = 0
    while read(signalPipe.read, &byte, 1) == 1 {
        switch Int32(byte) {
        case SIGUSR1: report()
        case SIGUSR2: receiver.setPowered(false)
        case SIGHUP: receiver.setPowered(true)
        case SIGTERM, SIGINT:
            report()
            receiver.stop()
            exit(0)
        default: break
        }
    }
}
