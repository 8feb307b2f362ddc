import Simulation
import Capture
import GPSModel
import JSON
import Policy

/// `replay --evaluate`: the figures as one JSON object (`--json`) or a short table for people.
enum EvaluationFormat {
    /// Figures rounded to what they can mean (mAh to 0.001, metres and seconds to 0.1, ratios to 0.001), so
    /// the same input prints the same bytes on any machine.
    private static func round(_ value: Double, _ places: Double) -> Double {
        (value * places).rounded() / places
    }

    static func json(
        _ evaluation: Evaluation, capture: String, profile: String, seenLive: FirstFixesSeenLive? = nil,
        system: (board: BoardModel, batteryWh: Double?)? = nil
    ) -> String {
        var object = JSONObject()
        object.add("capture", string: capture)
        object.add("profile", string: profile)
        object.add("receiver", string: evaluation.receiver.name)
        let model = evaluation.receiver
        var assumed = JSONObject()
        assumed.add("powerControl", string: model.powerControl.rawValue)
        assumed.add("connection", string: model.connection.rawValue)
        assumed.add(
            "reachableRegimes",
            strings: ReceiverRegime.allCases.reversed().filter(model.reachableRegimes.contains).map(\.rawValue))
        assumed.add("offCurrentUnknown", bool: model.offCurrentUnknown)
        assumed.add("unverified", strings: unverifiedFigures(model))
        object.add("assumed", json: assumed.closed)
        object.add("stalenessBound", number: evaluation.bound)
        object.add("duration", number: round(evaluation.duration, 10))
        object.add("trueFixes", integer: evaluation.trueFixes)
        object.add("policy", json: run(evaluation.policy))
        object.add("ratioToOracle", number: round(evaluation.ratioToOracle, 1000))
        var ratios = JSONObject()
        for baseline in [evaluation.alwaysOn, evaluation.stopTimeout] + (evaluation.interval.map { [$0.figures] } ?? []) {
            guard baseline.energy > 0 else { continue }
            ratios.add(dynamicKey: baseline.name, number: round(evaluation.policy.energy / baseline.energy, 1000))
        }
        object.add("ratioToBaselines", json: ratios.closed)
        if let trackError = evaluation.trackError {
            var error = JSONObject()
            error.add("p50", number: round(trackError.p50, 10))
            error.add("p95", number: round(trackError.p95, 10))
            error.add("max", number: round(trackError.max, 10))
            object.add("trackError", json: error.closed)
        }
        object.add("parking", json: parking(evaluation.parking))
        var bySpeed: [UInt8] = [UInt8(ascii: "[")]
        for (index, speedClass) in evaluation.bySpeed.enumerated() {
            if index > 0 { bySpeed.append(UInt8(ascii: ",")) }
            var item = JSONObject()
            item.add("from", number: speedClass.from)
            item.add("to", number: speedClass.to)
            item.add("seconds", number: round(speedClass.seconds, 10))
            item.add("energy", number: round(speedClass.energy, 1000))
            item.add("oracleEnergy", number: round(speedClass.oracleEnergy, 1000))
            item.add("ratioToOracle", number: ratio(speedClass.energy, speedClass.oracleEnergy))
            bySpeed += item.closed
        }
        bySpeed.append(UInt8(ascii: "]"))
        object.add("bySpeed", json: bySpeed)
        var pauses: [UInt8] = [UInt8(ascii: "[")]
        for (index, pause) in evaluation.pauses.enumerated() {
            if index > 0 { pauses.append(UInt8(ascii: ",")) }
            var item = JSONObject()
            item.add("pausedAt", number: round(pause.pausedAt, 1000))
            item.add("resumedAt", number: pause.resumedAt.map { round($0, 1000) })
            item.add("delayAfterStop", number: pause.delayAfterStop.map { round($0, 10) })
            item.add("delayAfterDeparture", number: pause.delayAfterDeparture.map { round($0, 10) })
            pauses += item.closed
        }
        pauses.append(UInt8(ascii: "]"))
        object.add("pauses", json: pauses)
        object.add("failedAcquisitions", integer: evaluation.failedAcquisitions)
        var baselines = JSONObject()
        baselines.add("alwaysOn", json: run(evaluation.alwaysOn))
        if let interval = evaluation.interval {
            var entry = JSONObject()
            entry.add("seconds", number: interval.seconds)
            entry.add("figures", json: run(interval.figures))
            baselines.add("interval", json: entry.closed)
        }
        baselines.add("stopTimeout", json: run(evaluation.stopTimeout))
        object.add("baselines", json: baselines.closed)
        object.add("oracle", json: run(evaluation.oracle))
        if let system {
            object.add(
                "system",
                json: JSONWriter.bytes(systemJSON(systemEnergy(evaluation, board: system.board), batteryWh: system.batteryWh)))
        }
        if let seenLive, !seenLive.isEmpty { object.add("firstFixesSeenLive", json: seenLive.json) }
        return object.line
    }

    /// The ratio of two charges, rounded; nil when the oracle spent nothing.
    private static func ratio(_ energy: Double, _ oracle: Double) -> Double? {
        oracle > 0 ? round(energy / oracle, 1000) : nil
    }

    private static func parking(_ parking: ParkingFigures) -> [UInt8] {
        var object = JSONObject()
        var rule = JSONObject()
        rule.add("minimum", number: parking.rule.minimum)
        rule.add("radius", number: parking.rule.radius)
        rule.add("leave", number: parking.rule.leave)
        object.add("rule", json: rule.closed)
        object.add("parks", integer: parking.parks.count)
        object.add("parkedSeconds", number: round(parking.parkedSeconds, 10))
        object.add("energyParked", number: round(parking.energyParked, 1000))
        object.add("energyMoving", number: round(parking.energyMoving, 1000))
        object.add("oracleEnergyParked", number: round(parking.oracleEnergyParked, 1000))
        object.add("oracleEnergyMoving", number: round(parking.oracleEnergyMoving, 1000))
        object.add("ratioToOracleParked", number: ratio(parking.energyParked, parking.oracleEnergyParked))
        object.add("ratioToOracleMoving", number: ratio(parking.energyMoving, parking.oracleEnergyMoving))
        object.add("wakesPerParkedHour", number: round(parking.wakesPerParkedHour, 100))
        object.add("departures", integer: parking.parks.count { $0.departure != nil })
        object.add("unseenDepartures", integer: parking.unseenDepartures)
        if let latency = parking.departureLatency {
            func figures(_ values: [Double]) -> [UInt8] {
                var figures = JSONObject()
                figures.add("p50", number: round(values[0], 10))
                figures.add("p95", number: round(values[1], 10))
                figures.add("max", number: round(values[2], 10))
                return figures.closed
            }
            object.add("departureSeconds", json: figures(latency.seconds))
            object.add("departureMetres", json: figures(latency.metres))
        }
        return object.closed
    }

    /// The line that splits the policy's and the oracle's charge by the true speed.
    static func bySpeedLine(_ classes: [Evaluation.SpeedClassFigures]) -> String {
        func speed(_ value: Double) -> String { TextLine.fixed(value, decimals: 0, width: 1) }
        let parts = classes.filter { $0.seconds > 0 }.map { speedClass in
            let range =
                if let to = speedClass.to {
                    speedClass.from == 0 ? "below \(speed(to)) m/s" : "\(speed(speedClass.from))-\(speed(to)) m/s"
                } else { "\(speed(speedClass.from)) m/s and over" }
            return "\(range) \(TextLine.fixed(speedClass.seconds / 60, decimals: 1, width: 1)) min, "
                + "\(TextLine.fixed(speedClass.energy, decimals: 2, width: 1)) / "
                + TextLine.fixed(speedClass.oracleEnergy, decimals: 2, width: 1)
        }
        return "energy by true speed, profile / oracle mAh: " + parts.joined(separator: "; ")
    }

    /// The parked line of the table: nothing when the track has no park.
    static func parkingLine(_ parking: ParkingFigures) -> String? {
        guard !parking.parks.isEmpty else { return nil }
        func mAh(_ value: Double) -> String { TextLine.fixed(value, decimals: 2, width: 1) + " mAh" }
        func times(_ energy: Double, _ oracle: Double) -> String {
            oracle > 0 ? TextLine.fixed(energy / oracle, decimals: 2, width: 1) + "x the oracle" : "the oracle spent nothing"
        }
        var line =
            "parked \(parking.parks.count)x, \(TextLine.fixed(parking.parkedSeconds / 3600, decimals: 1, width: 1)) h: "
            + "\(mAh(parking.energyParked)) (\(times(parking.energyParked, parking.oracleEnergyParked))), "
            + "\(TextLine.fixed(parking.wakesPerParkedHour, decimals: 1, width: 1)) wakes per parked hour; moving "
            + "\(mAh(parking.energyMoving)) (\(times(parking.energyMoving, parking.oracleEnergyMoving)))"
        if let latency = parking.departureLatency {
            func figures(_ values: [Double], _ unit: String) -> String {
                "p50 \(TextLine.fixed(values[0], decimals: 0, width: 1)) \(unit), p95 "
                    + "\(TextLine.fixed(values[1], decimals: 0, width: 1)) \(unit), max "
                    + "\(TextLine.fixed(values[2], decimals: 0, width: 1)) \(unit)"
            }
            line += "; departures seen after " + figures(latency.seconds, "s") + "; " + figures(latency.metres, "m")
        }
        if parking.unseenDepartures > 0 { line += "; \(parking.unseenDepartures) departures never seen" }
        return line
    }

    private static func run(_ figures: RunFigures) -> [UInt8] {
        var object = JSONObject()
        object.add("name", string: figures.name)
        object.add("energy", number: round(figures.energy, 1000))
        object.add("energyPercent", number: round(figures.energyPercent, 10))
        object.add("energyWhileStopped", number: round(figures.energyWhileStopped, 1000))
        var staleness = JSONObject()
        staleness.add("p50", number: round(figures.staleness.p50, 10))
        staleness.add("p95", number: round(figures.staleness.p95, 10))
        staleness.add("max", number: round(figures.staleness.max, 10))
        staleness.add("overBound", integer: figures.staleness.overBound)
        object.add("staleness", json: staleness.closed)
        object.add("secondsWithoutLocation", number: round(figures.secondsWithoutLocation, 10))
        object.add("delivered", integer: figures.delivered)
        object.add("downSeconds", number: round(figures.downSeconds, 10))
        object.add("wakes", integer: figures.wakes)
        return object.closed
    }

    /// The figures of `model` no source backs, by profile key.
    static func unverifiedFigures(_ model: ReceiverModel) -> [String] {
        ReceiverModel.numbers.map(\.key).filter { model.sources[$0] == nil }
    }

    /// The line saying how the receiver was assumed to be powered down, and what that reaches.
    static func assumption(_ model: ReceiverModel) -> String {
        let reachable = ReceiverRegime.allCases.reversed().filter(model.reachableRegimes.contains).map(\.rawValue)
        var line =
            "assumed: power control \(model.powerControl.rawValue) on a \(model.connection.rawValue) connection, reaching "
            + reachable.joined(separator: ", ")
        if model.offCurrentUnknown {
            line += "; no power commands and no switch: the receiver runs, the policy only filters what it delivers"
        }
        let unverified = unverifiedFigures(model)
        if !unverified.isEmpty { line += "; unverified figures: " + unverified.joined(separator: ", ") }
        return line
    }

    /// The policy's run as the whole system's, on `board`.
    static func systemEnergy(_ evaluation: Evaluation, board: BoardModel) -> SystemEnergy {
        SystemEnergy(
            board: board, seconds: evaluation.duration, receiver: evaluation.policy.energy,
            alwaysOn: evaluation.alwaysOn.energy)
    }

    /// The whole system's figures as JSON (`replay --evaluate --json`, `status --json`).
    static func systemJSON(_ energy: SystemEnergy, batteryWh: Double?) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("board", .string(energy.board.name)), ("boardMilliamps", .number(energy.board.assumedDraw)),
            ("boardIdleMeasured", .bool(energy.board.idle != nil)), ("boardWh", .number(round(energy.boardWh, 10000))),
            ("receiverWh", .number(round(energy.receiverWh, 10000))),
            ("receiverAlwaysOnWh", .number(round(energy.receiverAlwaysOnWh, 10000))),
            ("percentOfAlwaysOn", .number(round(energy.percentOfAlwaysOn, 10))),
        ]
        if let batteryWh {
            let hours = energy.batteryHours(batteryWh)
            members += [
                ("batteryWh", .number(batteryWh)), ("batteryHours", .number(round(hours.run, 10))),
                ("batteryHoursAlwaysOn", .number(round(hours.alwaysOn, 10))),
            ]
        }
        return .object(members)
    }

    /// The line that sets the receiver's saving beside the whole system's (and a battery's hours).
    static func systemLine(_ energy: SystemEnergy, batteryWh: Double?) -> String {
        let board = energy.board
        let draw = TextLine.fixed(board.assumedDraw, decimals: 0, width: 1)
        var line =
            "whole system on a \(board.title) (\(draw) mA at 5 V\(board.idle == nil ? ", its active figure: no idle measurement" : " idle")): "
            + "\(TextLine.fixed(energy.percentOfAlwaysOn, decimals: 1, width: 1)) % of always-on, the receiver alone "
            + "\(TextLine.fixed(energy.receiverPercentOfAlwaysOn, decimals: 1, width: 1)) %"
        if let batteryWh {
            let hours = energy.batteryHours(batteryWh)
            line +=
                "; a \(ParsedArguments.numberText(batteryWh)) Wh battery lasts \(TextLine.fixed(hours.run, decimals: 1, width: 1)) h "
                + "(\(TextLine.fixed(hours.alwaysOn, decimals: 1, width: 1)) h with the receiver always on)"
        }
        return line
    }

    static func table(
        _ evaluation: Evaluation, capture: String, profile: String, seenLive: FirstFixesSeenLive? = nil,
        system: (board: BoardModel, batteryWh: Double?)? = nil
    ) -> String {
        var lines: [String] = []
        let minutes = TextLine.fixed(evaluation.duration / 60, decimals: 1, width: 1)
        lines.append(
            "\(capture): \(evaluation.trueFixes) true fixes over \(minutes) min; profile \(profile), simulated receiver "
                + "\(evaluation.receiver.name), staleness bound \(TextLine.fixed(evaluation.bound, decimals: 0, width: 1)) m")
        lines.append(assumption(evaluation.receiver))
        lines.append("")
        let header = [
            "run", "energy mAh", "% always-on", "stopped mAh", "stale p50 m", "p95 m", "max m", "over bound", "delivered",
            "down %", "wakes",
        ]
        var rows: [[String]] = [header]
        for figures in evaluation.runs {
            rows.append([
                figures.name, TextLine.fixed(figures.energy, decimals: 2, width: 1),
                TextLine.fixed(figures.energyPercent, decimals: 1, width: 1),
                TextLine.fixed(figures.energyWhileStopped, decimals: 2, width: 1),
                TextLine.fixed(figures.staleness.p50, decimals: 1, width: 1),
                TextLine.fixed(figures.staleness.p95, decimals: 1, width: 1),
                TextLine.fixed(figures.staleness.max, decimals: 1, width: 1), String(figures.staleness.overBound),
                String(figures.delivered),
                TextLine.fixed(evaluation.duration > 0 ? figures.downSeconds / evaluation.duration * 100 : 0, decimals: 1, width: 1),
                String(figures.wakes),
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(
                row.enumerated().map { column, text in
                    column == 0
                        ? text + String(repeating: " ", count: widths[column] - text.count)
                        : TextLine.pad(text, widths[column])
                }.joined(separator: "  "))
        }
        lines.append("")
        // The oracle needs no charge at all when the first fix keeps every later one within the bound.
        lines.append(
            "energy / oracle: "
                + (evaluation.ratioToOracle.isFinite
                    ? TextLine.fixed(evaluation.ratioToOracle, decimals: 2, width: 1) : "∞ (the oracle needs no charge)"))
        if let trackError = evaluation.trackError {
            lines.append(
                "track error (batching): p50 \(TextLine.fixed(trackError.p50, decimals: 1, width: 1)) m, p95 "
                    + "\(TextLine.fixed(trackError.p95, decimals: 1, width: 1)) m, max "
                    + "\(TextLine.fixed(trackError.max, decimals: 1, width: 1)) m")
        }
        if let system {
            lines.append(systemLine(systemEnergy(evaluation, board: system.board), batteryWh: system.batteryWh))
        }
        lines.append(bySpeedLine(evaluation.bySpeed))
        if let line = parkingLine(evaluation.parking) { lines.append(line) }
        for pause in evaluation.pauses {
            var text = "pause at \(TextLine.fixed(pause.pausedAt, decimals: 0, width: 1)) s"
            if let delay = pause.delayAfterStop { text += " (\(TextLine.fixed(delay, decimals: 0, width: 1)) s after the stop)" }
            if let resumed = pause.resumedAt {
                text += ", resumed at \(TextLine.fixed(resumed, decimals: 0, width: 1)) s"
                if let delay = pause.delayAfterDeparture {
                    text += " (\(TextLine.fixed(delay, decimals: 0, width: 1)) s after the departure)"
                }
            }
            lines.append(text)
        }
        if evaluation.failedAcquisitions > 0 { lines.append("failed acquisitions: \(evaluation.failedAcquisitions)") }
        if let seenLive, !seenLive.isEmpty { lines += [""] + seenLive.textLines(prefix: "") }
        return lines.joined(separator: "\n") + "\n"
    }
}
