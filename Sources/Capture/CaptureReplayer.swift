import GPSD
import GPSModel

/// Replays a capture's `gpsd` lines through the live path's own line processor (`gps_unpack`, the same epoch
/// collapsing, the same stream state), with the capture's `t` as the clock. Pure: pacing, if any, is the
/// caller's (`beforeLine`). Works on a capture in memory (`run`) or on lines streamed one at a time (`feed`
/// then `finish`), with the same steps.
public final class CaptureReplayer {
    private let contents: CaptureContents?
    private let processor = ReportLineProcessor()
    private var state: StreamState
    private var line: [CChar] = []
    private var lastT = 0.0

    /// `satelliteDetail` as `GPSDSession`'s: off gives SKY counts only, which is all a location needs.
    public init(satelliteDetail: Bool = false, device: String? = nil) {
        contents = nil
        processor.satelliteDetail = satelliteDetail
        processor.collapsesEpochs = true
        state = StreamState(watchedDevice: device)
        line.reserveCapacity(16_384)
    }

    /// A replayer of a capture in memory, for `run`.
    public init(_ contents: CaptureContents, satelliteDetail: Bool = false, device: String? = nil) {
        self.contents = contents
        processor.satelliteDetail = satelliteDetail
        processor.collapsesEpochs = true
        state = StreamState(watchedDevice: device)
        line.reserveCapacity(16_384)
    }

    /// What a replay passes on besides gpsd's reports: the capture's own regime and event lines.
    public enum Annotation: Sendable, Equatable {
        case regime(String, reason: String?)
        case event(CaptureEvent)
    }

    /// Runs the capture given at init to the end, or until `beforeLine` (given each line's `t` first)
    /// returns false. Events come out with the `t` at which the live source would have passed them on.
    public func run(
        beforeLine: (Double) -> Bool = { _ in true }, onEvent: (Double, LiveEvent) -> Void,
        onAnnotation: (Double, Annotation) -> Void = { _, _ in }
    ) {
        guard let contents else { return }
        contents.bytes.withUnsafeBufferPointer { bytes in
            for entry in contents.lines {
                guard beforeLine(entry.t) else { return }
                feed(entry, bytes: bytes, onEvent: onEvent, onAnnotation: onAnnotation)
            }
        }
        finish(onEvent: onEvent)
    }

    /// One line of a capture; `bytes` is the buffer its ranges refer to.
    public func feed(
        _ entry: CaptureContents.Line, bytes: UnsafeBufferPointer<UInt8>, onEvent: (Double, LiveEvent) -> Void,
        onAnnotation: (Double, Annotation) -> Void = { _, _ in }
    ) {
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
            break
        }
    }

    /// The end of the capture: the last epoch ends with it.
    public func finish(onEvent: (Double, LiveEvent) -> Void) {
        let end = processor.nextQuietDeadline.map { max($0, lastT) } ?? lastT
        for fix in processor.flushAll() { onEvent(end, .fix(fix)) }
    }

    private func drain(t: Double, _ onEvent: (Double, LiveEvent) -> Void) {
        while let report = processor.next() {
            for event in state.events(for: report, host: "", port: "") { onEvent(t, event) }
        }
    }
}
