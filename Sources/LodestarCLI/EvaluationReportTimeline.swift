import Simulation
import Capture
import GPSModel
import Policy

/// Regime, current and staleness over the capture's duration, one pixel column at a time.
struct Timeline {
    static let width = 900.0
    static let left = 110.0
    static let right = 890.0
    static var columns: Int { Int(right - left) }

    let evaluation: Evaluation

    init(_ evaluation: Evaluation) {
        self.evaluation = evaluation
    }

    private var start: Double { evaluation.truth.first }
    private var duration: Double { max(evaluation.truth.duration, 1) }

    private func x(_ t: Double) -> Double {
        Self.left + (t - start) / duration * Double(Self.columns)
    }

    /// Seconds spent in each state within each pixel column.
    private func shares(_ timeline: [ReceiverInterval]) -> [[Double]] {
        var shares = Array(repeating: Array(repeating: 0.0, count: RegimeStyle.all.count), count: Self.columns)
        let columnSeconds = duration / Double(Self.columns)
        for interval in timeline {
            let from = max(interval.start, start)
            let to = min(interval.end, start + duration)
            guard to > from else { continue }
            let first = max(0, min(Self.columns - 1, Int((from - start) / columnSeconds)))
            let last = max(0, min(Self.columns - 1, Int((to - start) / columnSeconds)))
            let state = RegimeStyle.index(interval.state)
            for column in first...last {
                let columnStart = start + Double(column) * columnSeconds
                let overlap = min(to, columnStart + columnSeconds) - max(from, columnStart)
                if overlap > 0 { shares[column][state] += overlap }
            }
        }
        return shares
    }

    /// A band of rectangles, each pixel column the state it spent most time in.
    private func band(_ timeline: [ReceiverInterval], y: Double, height: Double, name: String) -> String {
        let shares = shares(timeline)
        var dominant: [Int?] = shares.map { column in
            guard column.contains(where: { $0 > 0 }) else { return nil }
            var best = 0
            for index in column.indices where column[index] > column[best] { best = index }
            return best
        }
        dominant.append(nil)
        var text = "<g class=\"band-row \(name)\">"
        var runStart = 0
        for column in 1..<dominant.count where dominant[column] != dominant[runStart] {
            if let state = dominant[runStart] {
                let style = RegimeStyle.all[state]
                text += "<rect class=\"band \(style.state.rawValue)\" x=\"\(px(Self.left + Double(runStart)))\" "
                text += "y=\"\(px(y))\" width=\"\(column - runStart)\" "
                text += "height=\"\(px(height))\"><title>\(EvaluationReport.escape(style.label)) "
                text += "\(clockRange(runStart, column))</title></rect>"
            }
            runStart = column
        }
        return text + "</g>\n"
    }

    private func clockRange(_ fromColumn: Int, _ toColumn: Int) -> String {
        let columnSeconds = duration / Double(Self.columns)
        return EvaluationReport.clock(Double(fromColumn) * columnSeconds) + "–"
            + EvaluationReport.clock(Double(toColumn) * columnSeconds)
    }

    func svg() -> String {
        let markerY = 12.0
        let bandY = 24.0
        let bandHeight = 28.0
        let oracleY = 62.0
        let oracleHeight = 12.0
        let currentTop = 100.0
        let currentHeight = 80.0
        let staleTop = 212.0
        let staleHeight = 140.0
        let axisY = staleTop + staleHeight
        let chartHeight = axisY + 36

        var text = "<svg class=\"chart timeline\" viewBox=\"0 0 900 \(px(chartHeight))\" "
        text += "width=\"900\" height=\"\(px(chartHeight))\" role=\"img\" "
        text += "aria-label=\"regime, current and staleness over time\">\n"

        // Minute grid behind every row.
        let minutes = duration / 60
        let step = [1.0, 2, 5, 10, 15, 20, 30, 60, 120, 240].first { minutes / $0 <= 12 } ?? 480
        var grid = ""
        var labels = ""
        var minute = 0.0
        while minute <= minutes + 1e-9 {
            let gx = px(x(start + minute * 60))
            grid += "M\(gx),\(px(bandY))V\(px(axisY + 4))"
            labels += "<text x=\"\(gx)\" y=\"\(px(axisY + 17))\" text-anchor=\"middle\" "
            labels += "class=\"small\">\(EvaluationReport.number(minute, decimals: 0))</text>"
            minute += step
        }
        text += "<path class=\"grid\" d=\"\(grid)\"/>\n"

        // Regime of the profile, and of the oracle for comparison.
        text += "<text x=\"8\" y=\"\(px(bandY + 19))\" class=\"label\">receiver</text>\n"
        text += band(evaluation.timeline, y: bandY, height: bandHeight, name: "policy")
        let oracle = Baselines.oracle(evaluation.truth, bound: evaluation.bound, model: evaluation.receiver)
        text += "<text x=\"8\" y=\"\(px(oracleY + 10))\" class=\"small\">oracle</text>\n"
        text += band(oracle.timeline, y: oracleY, height: oracleHeight, name: "oracle")

        // Pauses and resumes just above the regime row. A marker never covers the one before it (a resume a
        // few seconds after its pause hid the pause): it moves right to the next free place, with a tick down
        // to where it happened.
        let origin = start
        var free = -Double.infinity
        for event in evaluation.events {
            let at = x(event.t)
            let ex = max(at, free)
            let label = EvaluationReport.eventLabel(event, origin: origin)
            let marker: String
            switch event.kind.name {
            case "paused": marker = Marker.pause(x: ex, y: markerY)
            case "resumed": marker = Marker.resume(x: ex, y: markerY)
            default: continue
            }
            free = ex + Marker.diameter + 1
            let tick = ex > at ? "<path class=\"axis\" d=\"M\(px(at)),\(px(bandY))L\(px(ex)),\(px(markerY + 6))\"/>" : ""
            text += "<g class=\"event \(EvaluationReport.escape(event.kind.name))\"><title>"
            text += "\(EvaluationReport.escape(label))</title>\(tick)\(marker)</g>\n"
        }

        // Current: the mean in each pixel column, so the area is the charge.
        let model = evaluation.receiver
        let currents = [
            model.current.tracking, model.current.powerSave, model.current.acquisition, model.current.standby,
            model.current.off,
        ]
        let top = max(currents.max() ?? 1, 1e-9)
        let currentShares = shares(evaluation.timeline)
        text += "<text x=\"8\" y=\"\(px(currentTop + currentHeight / 2 + 4))\" "
        text += "class=\"label\">current mA</text>\n"
        text += "<path class=\"axis\" d=\"M\(px(Self.left)),"
        text += "\(px(currentTop + currentHeight))H\(px(Self.right))\"/>\n"
        text += yLabel(top, y: currentTop) + yLabel(0, y: currentTop + currentHeight)
        var current = ""
        var previousY: String?
        let totals = currentShares.map { $0.reduce(0.0, +) }
        for (column, share) in currentShares.enumerated() {
            guard totals[column] > 0 else {
                previousY = nil
                continue
            }
            var charge = 0.0
            for (seconds, milliamperes) in zip(share, currents) { charge += seconds * milliamperes }
            let mean = charge / totals[column]
            let y = px(currentTop + currentHeight * (1 - mean / top))
            let columnX = px(Self.left + Double(column))
            if previousY == nil {
                current += "M\(columnX),\(y)"
            } else if previousY != y {
                current += "H\(columnX)V\(y)"
            }
            previousY = y
            if column == totals.count - 1 || totals[column + 1] <= 0 {
                current += "H\(px(Self.left + Double(column + 1)))"
            }
        }
        text += "<path class=\"current\" d=\"\(current)\"><title>receiver current (mean per pixel; tracking "
        text += "\(EvaluationReport.number(model.current.tracking, decimals: 1)) mA, acquiring "
        text += "\(EvaluationReport.number(model.current.acquisition, decimals: 1)) mA, standby "
        text += "\(EvaluationReport.number(model.current.standby, decimals: 3)) mA, off "
        text += "\(EvaluationReport.number(model.current.off, decimals: 3)) mA)</title></path>\n"

        // Staleness: the largest in each pixel column, against the bound; over it in red.
        var maxima: [Double?] = Array(repeating: nil, count: Self.columns)
        let columnSeconds = duration / Double(Self.columns)
        for (point, staleness) in zip(evaluation.truth.points, evaluation.stalenessPerFix) {
            guard let staleness else { continue }
            let column = max(0, min(Self.columns - 1, Int((point.t - start) / columnSeconds)))
            maxima[column] = max(maxima[column] ?? 0, staleness)
        }
        let largest = maxima.compactMap { $0 }.max() ?? 0
        let ceiling = Self.niceCeiling(max(largest, evaluation.bound * 1.25))
        let staleY = { (value: Double) in staleTop + staleHeight * (1 - value / ceiling) }
        let boundY = staleY(evaluation.bound)
        text += "<text x=\"8\" y=\"\(px(staleTop - 6))\" class=\"label\">staleness m</text>\n"
        text += yLabel(ceiling, y: staleTop) + yLabel(0, y: staleTop + staleHeight)
        text += "<defs><clipPath id=\"under-bound\"><rect x=\"0\" y=\"\(px(boundY))\" "
        text += "width=\"900\" height=\"\(px(staleTop + staleHeight - boundY + 2))\"/></clipPath>"
        text += "<clipPath id=\"over-bound\"><rect x=\"0\" y=\"\(px(staleTop - 2))\" "
        text += "width=\"900\" height=\"\(px(boundY - staleTop + 2))\"/></clipPath></defs>\n"
        var line = PathBuilder(step: 0.5)
        var overDots = ""
        var overColumns = 0
        for (column, value) in maxima.enumerated() {
            guard let value else { continue }
            let point = (x: Self.left + Double(column) + 0.5, y: staleY(value))
            line.line(to: point)
            if value > evaluation.bound {
                overColumns += 1
                overDots += "M\(px(point.x)),\(px(point.y))h0"
            }
        }
        line.finish()
        text += "<path class=\"stale\" clip-path=\"url(#under-bound)\" d=\"\(line.data)\"/>\n"
        text += "<path class=\"stale over\" clip-path=\"url(#over-bound)\" d=\"\(line.data)\"/>\n"
        if !overDots.isEmpty {
            text += "<path class=\"overdot\" d=\"\(overDots)\"><title>over the bound at "
            text += "\(evaluation.policy.staleness.overBound) true fixes</title></path>\n"
        }
        text += "<path class=\"bound\" d=\"M\(px(Self.left)),\(px(boundY))"
        text += "H\(px(Self.right))\"><title>staleness bound "
        text += "\(EvaluationReport.number(evaluation.bound, decimals: 0)) m</title></path>\n"
        // In the left margin, level with the bound: inside the chart the staleness line ran through it.
        text += "<text x=\"\(px(Self.left - 6))\" y=\"\(px(boundY + 4))\" "
        text += "text-anchor=\"end\" class=\"small bound-label\">bound "
        text += "\(EvaluationReport.number(evaluation.bound, decimals: 0)) m</text>\n"

        // The time axis.
        text += "<path class=\"axis\" d=\"M\(px(Self.left)),\(px(axisY))"
        text += "H\(px(Self.right))\"/>\n\(labels)\n"
        text += "<text x=\"\(px(Self.left - 8))\" y=\"\(px(axisY + 17))\" "
        text += "text-anchor=\"end\" class=\"small\">minutes</text>\n</svg>\n"
        return text
    }

    private func yLabel(_ value: Double, y: Double) -> String {
        let decimals = value != 0 && value < 10 ? 1 : 0
        return "<text x=\"\(px(Self.left - 6))\" y=\"\(px(y + 4))\" "
            + "text-anchor=\"end\" class=\"small\">\(EvaluationReport.number(value, decimals: decimals))</text>\n"
    }

    /// The smallest 1, 2, 2.5 or 5 × 10^k at or above `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value.isFinite, value > 0 else { return 1 }
        var magnitude = 1.0
        while magnitude * 10 <= value { magnitude *= 10 }
        while magnitude > value { magnitude /= 10 }
        for factor in [1.0, 2, 2.5, 5, 10] where factor * magnitude >= value { return factor * magnitude }
        return 10 * magnitude
    }
}
