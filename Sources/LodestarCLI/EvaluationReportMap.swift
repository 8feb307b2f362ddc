import Simulation
import Capture
import GPSModel
import Policy

#if canImport(Glibc)
import Glibc
#endif

/// The track in a local equirectangular projection fitted to a 900×600 box, north up.
struct TrackMap {
    static let width = 900.0
    static let height = 600.0
    static let margin = 24.0

    let evaluation: Evaluation
    private let points: [(x: Double, y: Double)]
    /// Pixels per metre.
    private let scale: Double
    private let centre: (latitude: Double, longitude: Double)
    private let metresPerDegree: (x: Double, y: Double)

    init(_ evaluation: Evaluation) {
        self.evaluation = evaluation
        let truth = evaluation.truth.points
        var minLatitude = Double.infinity
        var maxLatitude = -Double.infinity
        var minLongitude = Double.infinity
        var maxLongitude = -Double.infinity
        for point in truth {
            minLatitude = min(minLatitude, point.location.latitude)
            maxLatitude = max(maxLatitude, point.location.latitude)
            minLongitude = min(minLongitude, point.location.longitude)
            maxLongitude = max(maxLongitude, point.location.longitude)
        }
        guard !truth.isEmpty else {
            points = []
            scale = 1
            centre = (0, 0)
            metresPerDegree = (111_320, 110_574)
            return
        }
        let centreLatitude = (minLatitude + maxLatitude) / 2
        let centreLongitude = (minLongitude + maxLongitude) / 2
        let metresPerDegreeX = 111_320 * cos(centreLatitude * .pi / 180)
        let metresPerDegreeY = 110_574.0
        centre = (centreLatitude, centreLongitude)
        metresPerDegree = (metresPerDegreeX, metresPerDegreeY)
        let spanX = (maxLongitude - minLongitude) * metresPerDegreeX
        let spanY = (maxLatitude - minLatitude) * metresPerDegreeY
        let fit = min(
            (Self.width - 2 * Self.margin) / max(spanX, 1e-9), (Self.height - 2 * Self.margin) / max(spanY, 1e-9))
        // A capture standing still would otherwise zoom into its noise without limit.
        let scale = min(fit, 20)
        self.scale = scale
        points = truth.map { point in
            Self.project(
                point.location, centre: (centreLatitude, centreLongitude),
                metresPerDegree: (metresPerDegreeX, metresPerDegreeY), scale: scale)
        }
    }

    private static func project(
        _ location: Location, centre: (latitude: Double, longitude: Double),
        metresPerDegree: (x: Double, y: Double), scale: Double
    ) -> (x: Double, y: Double) {
        (
            width / 2 + (location.longitude - centre.longitude) * metresPerDegree.x * scale,
            height / 2 - (location.latitude - centre.latitude) * metresPerDegree.y * scale
        )
    }

    /// The index of the last true fix at or before `t` (the first if none).
    private func index(atOrBefore t: Double) -> Int {
        let truth = evaluation.truth.points
        var low = 0
        var high = truth.count
        while low < high {
            let middle = (low + high) / 2
            if truth[middle].t <= t { low = middle + 1 } else { high = middle }
        }
        return max(0, low - 1)
    }

    // Not optimised: Swift 6.0.3's optimiser (Debian trixie's swiftlang, built with assertions) aborts on this
    // function in LICM, and a report's drawing needs no speed.
    @_optimize(none)
    func svg() -> String {
        var text = "<svg class=\"chart track-map\" viewBox=\"0 0 900 600\" width=\"900\" height=\"600\" role=\"img\" "
        text += "aria-label=\"the track coloured by receiver regime\">\n"
        guard !points.isEmpty else {
            return text
                + "<text x=\"450\" y=\"300\" text-anchor=\"middle\" class=\"label\">no fix to draw</text>\n</svg>\n"
        }
        let truth = evaluation.truth.points
        let origin = evaluation.truth.first

        // The truth, thin and grey, underneath.
        var underlay = PathBuilder(step: 1)
        for point in points { underlay.line(to: point) }
        underlay.finish()
        text += "<path class=\"truth\" d=\"\(underlay.data)\"><title>true track</title></path>\n"

        // The truth again, each segment coloured by the regime at its middle.
        var builders = RegimeStyle.all.map { _ in PathBuilder(step: 1) }
        var cursor = StateCursor(evaluation.timeline)
        var current: Int?
        if points.count == 1 {
            let only = RegimeStyle.index(cursor.state(at: truth[0].t))
            builders[only].move(to: points[0])
            builders[only].line(to: (points[0].x + 0.1, points[0].y))
        }
        for index in 0..<max(0, points.count - 1) {
            let state = RegimeStyle.index(cursor.state(at: (truth[index].t + truth[index + 1].t) / 2))
            if state != current {
                if let current { builders[current].finish() }
                builders[state].move(to: points[index])
                current = state
            }
            builders[state].line(to: points[index + 1])
        }
        // Sleeps over tracking: draw the up states first.
        for order in [0, 1, 2, 3, 4] {
            builders[order].finish()
            guard !builders[order].isEmpty else { continue }
            let style = RegimeStyle.all[order]
            text += "<path class=\"track \(style.state.rawValue)\" d=\"\(builders[order].data)\">"
            text += "<title>\(EvaluationReport.escape(style.label))</title></path>\n"
        }

        // Sleeps standing still (or creeping) hardly draw a line: a disc over where each was, sized by how long.
        // Only sleeps of a minute or more: the seconds-long naps between fixes are the green (off) track itself, and a
        // disc for each would bury the map.
        for episode in SleepEpisode.episodes(evaluation.timeline, events: evaluation.events)
        where episode.span >= EvaluationReport.discMinimum {
            let first = index(atOrBefore: episode.start)
            let during = points[first...max(first, index(atOrBefore: episode.end))]
            let low = (x: during.map(\.x).min() ?? 0, y: during.map(\.y).min() ?? 0)
            let high = (x: during.map(\.x).max() ?? 0, y: during.map(\.y).max() ?? 0)
            let reach = Self.distance(low, high) / 2
            guard reach < 30 else { continue }
            let anchor = (x: (low.x + high.x) / 2, y: (low.y + high.y) / 2)
            let radius = max(min(36, 8 + 4 * (episode.downSeconds / 60).squareRoot()), reach + 6)
            let kind = episode.standbySeconds * 2 > episode.downSeconds ? "sleep standby" : "sleep"
            text += "<circle class=\"\(kind)\" cx=\"\(px(anchor.x))\" "
            text += "cy=\"\(px(anchor.y))\" r=\"\(px(radius))\">"
            text += "<title>asleep \(EvaluationReport.number(episode.downSeconds, decimals: 0)) s between "
            text += EvaluationReport.clock(episode.start - origin) + " and "
            text += EvaluationReport.clock(episode.end - origin)
            text += episode.wakes > 0 ? " (\(episode.wakes) probes)" : ""
            text += "</title></circle>\n"
        }

        // What the application was given.
        var dots = ""
        var lastDot: (x: Double, y: Double)?
        var deliveryIndex = 0
        for delivery in evaluation.deliveries {
            while deliveryIndex + 1 < truth.count, truth[deliveryIndex + 1].t <= delivery.t { deliveryIndex += 1 }
            let point =
                delivery.location.latitude.isFinite && delivery.location.longitude.isFinite
                ? Self.project(delivery.location, centre: centre, metresPerDegree: metresPerDegree, scale: scale)
                : points[deliveryIndex]
            if let lastDot, Self.distance(point, lastDot) < 7 { continue }
            dots += "M\(px(point.x)),\(px(point.y))h0"
            lastDot = point
        }
        if !dots.isEmpty {
            text += "<path class=\"delivered\" d=\"\(dots)\"><title>\(evaluation.deliveries.count) locations "
            text += "delivered</title></path>\n"
        }

        // Events: pauses up-left of where they happened, resumes up-right, failures on the spot.
        for event in evaluation.events {
            let point = points[index(atOrBefore: event.t)]
            let label = EvaluationReport.eventLabel(event, origin: origin)
            let marker: String
            switch event.kind.name {
            case "paused":
                marker = "<path d=\"M\(px(point.x)),\(px(point.y))"
                    + "l-9,-14\" class=\"axis\"/>" + Marker.pause(x: point.x - 9, y: point.y - 14)
            case "resumed":
                marker = "<path d=\"M\(px(point.x)),\(px(point.y))"
                    + "l9,-14\" class=\"axis\"/>" + Marker.resume(x: point.x + 9, y: point.y - 14)
            case "acquisitionFailed":
                marker = Marker.failure(x: point.x, y: point.y)
            default:
                continue
            }
            text += "<g class=\"event \(EvaluationReport.escape(event.kind.name))\"><title>"
            text += "\(EvaluationReport.escape(label))</title>\(marker)</g>\n"
        }

        // Start, end, scale, north.
        if let start = points.first, let end = points.last {
            text += "<circle cx=\"\(px(start.x))\" cy=\"\(px(start.y))\" "
            text += "r=\"5\" fill=\"#fff\" stroke=\"#111827\" stroke-width=\"2\"><title>start</title></circle>\n"
            text += "<rect x=\"\(px(end.x - 4.5))\" y=\"\(px(end.y - 4.5))\" "
            text += "width=\"9\" height=\"9\" fill=\"#111827\"><title>end</title></rect>\n"
        }
        let metres = Self.scaleBarMetres(pixelsPerMetre: scale)
        let length = metres * scale
        text += "<path class=\"scale\" d=\"M20,580h\(px(length))M20,575v10"
        text += "M\(px(20 + length)),575v10\"/>\n"
        text += "<text x=\"\(px(26 + length))\" y=\"584\" class=\"label\">"
        text += metres >= 1000
            ? EvaluationReport.number(metres / 1000, decimals: 0) + " km"
            : EvaluationReport.number(metres, decimals: 0) + " m"
        text += "</text>\n<text x=\"880\" y=\"28\" text-anchor=\"middle\" class=\"label\">N</text>"
        text += "<path d=\"M880,34v20M875,40l5,-6l5,6\" class=\"axis\"/>\n</svg>\n"
        return text
    }

    private static func distance(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
        ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }

    /// The longest round distance whose bar is at most 160 px.
    static func scaleBarMetres(pixelsPerMetre: Double) -> Double {
        let candidates: [Double] = [
            1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
        ]
        return candidates.last { $0 * pixelsPerMetre <= 160 } ?? 1
    }
}
