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
}
