import GPSD
import GPSModel

/// Replays a capture's `gpsd` lines through the live path's own line processor (`gps_unpack`, the same epoch
/// collapsing, the same stream state), with the capture's `t` as the clock. Pure: pacing, if any, is the
/// caller's (`beforeLine`).
public final class CaptureReplayer {
    public let contents: CaptureContents
    private let processor = ReportLineProcessor()
    private var state: StreamState

    /// `satelliteDetail` as `GPSDSession`'s: off gives SKY counts only, which is all a location needs.
    public init(_ contents: CaptureContents, satelliteDetail: Bool = false, device: String? = nil) {
        self.contents = contents
        processor.satelliteDetail = satelliteDetail
        processor.collapsesEpochs = true
        state = StreamState(watchedDevice: device)
    }

    /// What a replay passes on besides gpsd's reports: the capture's own regime and event lines.
    public enum Annotation: Sendable, Equatable {
        case regime(String, reason: String?)
        case event(CaptureEvent)
    }

    /// Runs to the end, or until `beforeLine` (given each line's `t` first) returns false. Events come out
    /// with the `t` at which the live source would have passed them on.
    public func run(
        beforeLine: (Double) -> Bool = { _ in true }, onEvent: (Double, LiveEvent) -> Void,
        onAnnotation: (Double, Annotation) -> Void = { _, _ in }
    ) {
        var line: [CChar] = []
        line.reserveCapacity(16_384)
        var lastT = 0.0
        contents.bytes.withUnsafeBufferPointer { bytes in
            for entry in contents.lines {
                guard beforeLine(entry.t) else { return }
                lastT = entry.t
                if processor.hasPending, let due = processor.nextQuietDeadline, due <= entry.t {
                    processor.flushQuiet(now: entry.t)
                    drain(t: due, onEvent)
                }
                switch entry.payload {
                case .gpsd(let range):
                    line.removeAll(keepingCapacity: true)
                    for byte in bytes[range] { line.append(CChar(bitPattern: byte)) }
                    line.append(0)
                    line.withUnsafeBufferPointer { chars in
                        processor.process(UnsafeBufferPointer(rebasing: chars.dropLast()), now: entry.t)
                    }
                    drain(t: entry.t, onEvent)
                case .regime(let regime, let reason):
                    onAnnotation(entry.t, .regime(regime, reason: reason))
                case .event(let event):
                    onAnnotation(entry.t, .event(event))
                case .received, .transmitted:
                    continue
                }
            }
        }
        // The last epoch ends with the capture.
        let end = processor.nextQuietDeadline.map { max($0, lastT) } ?? lastT
        for fix in processor.flushAll() { onEvent(end, .fix(fix)) }
    }

    private func drain(t: Double, _ onEvent: (Double, LiveEvent) -> Void) {
        while let report = processor.next() {
            for event in state.events(for: report, host: "", port: "") { onEvent(t, event) }
        }
    }
}
