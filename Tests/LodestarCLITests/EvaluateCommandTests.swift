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
}
