import GPSD
import GPSModel

#if canImport(Glibc)
import Glibc
#endif

/// Turns stream events into printed locations, the same way for `watch`, `demo` and `replay`: fixes become
/// locations with the context of the reports around them, and each is written as one piece.
struct LocationEmitter {
    let format: LocationFormat
    let context: CommandContext
    let count: Int?
    /// The command's name for messages on stderr.
    let name: String
    /// Whether stream changes (devices, losses) are told on stderr: yes live, no in a replay.
    let announcesStream: Bool
    private var assembler: LocationAssembler
    private(set) var printed = 0
    private(set) var outcome = ExitCode.success
    /// Count reached, reader gone, or output failed.
    private(set) var finished = false

    init(
        format: LocationFormat, count: Int?, context: CommandContext, name: String = "lodestar",
        origin: LocationOrigin = .live, announcesStream: Bool = true
    ) {
        self.format = format
        self.count = count
        self.context = context
        self.name = name
        self.announcesStream = announcesStream
        assembler = LocationAssembler(origin: origin)
    }

    mutating func handle(_ event: LiveEvent) {
        switch event {
        case .watching(let host, let port, let version):
            guard announcesStream else { return }
            let release = version.map { " \($0.release)" } ?? ""
            context.say("\(name): watching gpsd\(release) at \(host):\(port)")
        case .fix(let fix):
            guard !finished, let location = assembler.location(for: fix) else { return }
            write(format.line(for: location))
            if outcome == .success, !finished {
                printed += 1
                if let count, printed >= count { finished = true }
            }
        case .report(let report):
            assembler.note(report)
            if case .error(let message) = report { context.say("\(name): gpsd says: \(message)") }
        case .deviceActivated(let device):
            assembler.note(.device(device))
            guard announcesStream else { return }
            let driver = device.driver.map { " (\($0))" } ?? ""
            context.say("\(name): device \(device.path)\(driver) active")
        case .deviceClosed(let path):
            assembler.note(.device(DeviceInfo(path: path)))
            guard announcesStream else { return }
            context.say("\(name): device \(path) closed")
        case .receiverLost(let reason):
            guard announcesStream else { return }
            context.say("\(name): receiver lost (\(reason)); waiting for it to come back")
        case .receiverBack:
            guard announcesStream else { return }
            context.say("\(name): receiver back")
        }
    }

    private mutating func write(_ text: String) {
        switch context.standardOutput.write(text) {
        case .written:
            break
        case .readerGone:
            finished = true
        case .failed(let code):
            context.say("\(name): cannot write output: \(String(cString: strerror(code)))")
            outcome = .ioError
            finished = true
        }
    }
}
