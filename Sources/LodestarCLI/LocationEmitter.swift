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
    private var printer: LocationPrinter
    /// The header is written (gpx and geojson then need their footer).
    private var opened = false
    /// False after EPIPE or a write error: nothing more is written.
    private var writable = true
    private(set) var printed = 0
    private(set) var outcome = ExitCode.success
    /// Count reached, reader gone, or output failed.
    private(set) var finished = false
    /// What the outstanding loss was (gpsd or the receiver), so the return names the same one.
    private var lostGPSD = false
    /// `host:port` of the gpsd watched, for the message when it is back.
    private var gpsdAddress = "gpsd"

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
        printer = LocationPrinter(format: format)
    }

    /// Writes the document's start (GPX, GeoJSON); live, once gpsd is watching, so a gpsd that is not there
    /// leaves no half document.
    mutating func open() {
        guard !opened else { return }
        opened = true
        _ = write(printer.header())
    }

    /// The document's end, whatever ended the stream, unless the output is gone.
    mutating func close() {
        if opened { _ = write(printer.footer()) }
    }

    /// Prints a location the caller already has (a simulated replay's deliveries).
    mutating func print(_ location: Location, t: Double? = nil) {
        guard !finished else { return }
        open()
        if write(printer.line(for: location, t: t)) {
            printed += 1
            if let count, printed >= count { finished = true }
        }
    }

    /// Prints a line that is not a location (a simulated replay's regime and event lines), in the formats
    /// that are lines; GPX and GeoJSON documents hold locations only.
    mutating func printAnnotation(_ line: String) {
        guard !finished, format == .jsonl || format == .text else { return }
        open()
        _ = write(line)
    }

    /// The track breaks here (the receiver went down).
    mutating func breakSegment() {
        printer.breakSegment()
    }

    mutating func handle(_ event: LiveEvent) {
        switch event {
        case .watching(let host, let port, let version):
            guard announcesStream else { return }
            open()
            let release = version.map { " \($0.release)" } ?? ""
            gpsdAddress = "\(host):\(port)"
            context.say("\(name): watching gpsd\(release) at \(host):\(port)")
        case .fix(let fix):
            guard !finished, let location = assembler.location(for: fix) else { return }
            open()
            if write(printer.line(for: location)) {
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
            printer.breakSegment()
            lostGPSD = false
            guard announcesStream else { return }
            context.say("\(name): receiver lost (\(reason)); waiting for it to come back")
        case .gpsdLost(let reason):
            printer.breakSegment()
            lostGPSD = true
            guard announcesStream else { return }
            context.say("\(name): \(reason); waiting for it to come back")
        case .receiverBack:
            guard announcesStream else { return }
            context.say("\(name): \(lostGPSD ? "gpsd at \(gpsdAddress) back" : "receiver back")")
        }
    }

    /// Writes one piece; false (and the stream finished) when the output is gone or failed.
    private mutating func write(_ text: String) -> Bool {
        guard writable else { return false }
        if text.isEmpty { return true }
        switch context.standardOutput.write(text) {
        case .written:
            return true
        case .readerGone:
            writable = false
        case .failed(let code):
            context.say("\(name): cannot write output: \(CommandContext.reason(code))")
            outcome = .ioError
            writable = false
        }
        finished = true
        return false
    }
}
