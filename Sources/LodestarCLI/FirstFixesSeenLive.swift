import Capture
import GPSModel
import JSON
import Receivers
import Simulation

/// The times to first fix a capture saw live: its `firstFixAfterWake` event lines with their `seconds`
/// (docs/capture-format.md). `replay` lists them next to what it prints; a capture without any adds nothing.
struct FirstFixesSeenLive {
    struct Wake: Equatable {
        /// The event line's `t`.
        var t: Double
        /// Wall-clock UTC of `t`, when the capture's header says when it started.
        var time: UTCTime?
        /// The regime the receiver woke from, as the capture wrote it.
        var regime: String?
        var seconds: Double
    }

    let wakes: [Wake]

    init(_ contents: CaptureContents) {
        var collector = Collector(started: contents.header.started)
        for line in contents.lines {
            if case .event(let event) = line.payload { collector.add(t: line.t, .event(event)) }
        }
        wakes = collector.result.wakes
    }

    init(wakes: [Wake]) {
        self.wakes = wakes
    }

    /// Gathers the wakes from a capture's lines as they are read.
    struct Collector {
        let started: UTCTime?
        private var wakes: [Wake] = []

        init(started: UTCTime?) {
            self.started = started
        }

        mutating func add(t: Double, _ annotation: CaptureReplayer.Annotation) {
            guard case .event(let event) = annotation, event.kind == PowerEvent.Kind.firstFixAfterWake.rawValue,
                let seconds = event.seconds
            else { return }
            let time = started.map { started -> UTCTime in
                let milliseconds = Int64((t * 1000).rounded())
                let nanoseconds = Int64(started.nanoseconds) + milliseconds % 1000 * 1_000_000
                return UTCTime(
                    seconds: started.seconds + milliseconds / 1000 + nanoseconds / 1_000_000_000,
                    nanoseconds: Int32(nanoseconds % 1_000_000_000))
            }
            wakes.append(Wake(t: t, time: time, regime: event.regime, seconds: seconds))
        }

        var result: FirstFixesSeenLive { FirstFixesSeenLive(wakes: wakes) }
    }

    var isEmpty: Bool { wakes.isEmpty }

    /// The median (nearest rank, as the evaluation's p50) and the longest, in seconds.
    var median: Double { EvaluationMath.percentile(wakes.map(\.seconds).sorted(), 0.5) }
    var longest: Double { wakes.map(\.seconds).max() ?? 0 }

    /// `times to first fix seen live: N wakes, median M s, max X s`.
    var title: String {
        "times to first fix seen live: \(wakes.count) wake\(wakes.count == 1 ? "" : "s"), median "
            + "\(seconds(median)) s, max \(seconds(longest)) s"
    }

    /// The title, then one line per wake: `  +T s  TIME  from REGIME  S s`; none when there are no wakes.
    func textLines(prefix: String) -> [String] {
        guard !isEmpty else { return [] }
        return [prefix + title]
            + wakes.map { wake in
                var line = prefix + "  +" + TextLine.fixed(wake.t, decimals: 1, width: 1) + " s"
                if let time = wake.time { line += "  " + time.iso8601 }
                line += "  from " + (wake.regime ?? "an unknown regime") + "  " + seconds(wake.seconds) + " s"
                return line
            }
    }

    /// `{"wakes":[{"t":…,"time":…,"regime":…,"seconds":…}],"median":…,"max":…}`.
    var json: [UInt8] {
        var list: [UInt8] = [UInt8(ascii: "[")]
        for (index, wake) in wakes.enumerated() {
            if index > 0 { list.append(UInt8(ascii: ",")) }
            var item = JSONObject()
            item.add("t", number: (wake.t * 1000).rounded() / 1000)
            item.add("time", string: wake.time?.iso8601)
            item.add("regime", string: wake.regime)
            item.add("seconds", number: wake.seconds)
            list += item.closed
        }
        list.append(UInt8(ascii: "]"))
        var object = JSONObject()
        object.add("wakes", json: list)
        object.add("median", number: median)
        object.add("max", number: longest)
        return object.closed
    }

    private func seconds(_ value: Double) -> String {
        TextLine.fixed(value, decimals: 1, width: 1)
    }
}
