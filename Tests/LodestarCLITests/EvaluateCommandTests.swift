import Foundation
import TestSupport
import Testing
@testable import LodestarCLI

/// `lodestar replay --evaluate --json` as a user runs it.
@Suite struct EvaluateCommandTests {
    @Test func evaluateJSONReproducesTheSameNumbersOnEveryRun() throws {
        let drive = Fixtures.path("munich-urban-stopgo-31m.nmea")
        let (code, first, _) = run(["replay", drive, "--profile", "car", "--evaluate", "--json"])
        #expect(code == 0)
        #expect(run(["replay", drive, "--profile", "car", "--evaluate", "--json"]).output == first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        for key in ["policy", "baselines", "oracle", "ratioToOracle", "ratioToBaselines", "pauses", "stalenessBound"] {
            #expect(object[key] != nil, "no \(key) in \(first)")
        }
        let baselines = try #require(object["baselines"] as? [String: Any])
        #expect(baselines["alwaysOn"] != nil && baselines["stopTimeout"] != nil)
    }

    /// The Reno drive stands twice for a quarter and half an hour: both are parks in the JSON and in the table,
    /// with what they cost against the oracle and how soon the departure was seen; the parked and moving
    /// charges add up to the run's.
    @Test func evaluateReportsTheParksOfADrive() throws {
        let drive = Fixtures.path("garmin-drive-reno-tahoe-2h43m.nmea")
        let (code, json, _) = run(["replay", drive, "--profile", "car", "--evaluate", "--json"])
        #expect(code == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let parking = try #require(object["parking"] as? [String: Any], "no parking in \(json)")
        let policy = try #require(object["policy"] as? [String: Any])
        #expect(parking["parks"] as? Int == 2 && parking["unseenDepartures"] as? Int == 0, "\(parking)")
        let parked = try #require(parking["energyParked"] as? Double)
        let moving = try #require(parking["energyMoving"] as? Double)
        #expect(abs(parked + moving - (policy["energy"] as? Double ?? 0)) < 0.002, "\(parking)")
        #expect(parking["departureMetres"] != nil && parking["wakesPerParkedHour"] != nil)
        let table = run(["replay", drive, "--profile", "car", "--evaluate"]).output
        #expect(table.contains("\nparked 2x, 0.8 h: "), "\(table)")
    }

    /// `--board` sets the whole system beside the receiver: the board's watt-hours dwarf the receiver's, so the
    /// system's share of always-on is far above the receiver's, and a battery's hours follow from it. Without
    /// --evaluate the option is refused; a board that is not declared is refused with the ones that are.
    @Test func evaluateWithABoardGivesTheWholeSystemsFigures() throws {
        let drive = Fixtures.path("munich-urban-stopgo-31m.nmea")
        let (code, json, error) = run(
            ["replay", drive, "--profile", "car", "--evaluate", "--json", "--board", "pi4", "--battery", "10"])
        #expect(code == 0, "\(error)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let system = try #require(object["system"] as? [String: Any], "no system in \(json)")
        let policy = try #require(object["policy"] as? [String: Any])
        let receiverPercent = try #require(policy["energyPercent"] as? Double)
        let systemPercent = try #require(system["percentOfAlwaysOn"] as? Double)
        #expect(system["board"] as? String == "pi4" && system["boardMilliamps"] as? Double == 320)
        #expect(systemPercent > 90 && receiverPercent < 50, "system \(systemPercent) %, receiver \(receiverPercent) %")
        let hours = try #require(system["batteryHours"] as? Double)
        let alwaysOnHours = try #require(system["batteryHoursAlwaysOn"] as? Double)
        let boardWh = try #require(system["boardWh"] as? Double)
        let receiverWh = try #require(system["receiverWh"] as? Double)
        let duration = try #require(object["duration"] as? Double)
        #expect(abs(hours - 10 / ((boardWh + receiverWh) / (duration / 3600))) < 0.2, "\(system)")
        #expect(hours > alwaysOnHours && hours < alwaysOnHours * 1.2, "\(system)")
        let table = run(["replay", drive, "--profile", "car", "--evaluate", "--board", "pi3a+"]).output
        #expect(table.contains("whole system on a Raspberry Pi 3 Model A+ (350 mA at 5 V, its active figure: no idle measurement): "))
        #expect(run(["replay", drive, "--board", "pi4"]).code == 64)
        let (refused, _, words) = run(["replay", drive, "--profile", "car", "--evaluate", "--board", "pi9"])
        #expect(refused == 64 && words.contains("zero2w|pi3a+|pi4|pi5|cm4"), "\(words)")
    }
}
