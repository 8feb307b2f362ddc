import Simulation
import Capture
import Lodestar
import TestSupport
import Policy
import Testing

/// The evaluation on the repo's real captures: the oracle is the floor, and the figures reproduce.
@Suite(.tags(.slow)) struct EvaluationCaptureTests {
    /// Knowing the truth, the oracle meets the bound everywhere and spends no more than any baseline or
    /// profile run that also keeps staleness within the bound at every true fix.
    @Test(arguments: Fixtures.captureNames)
    func theOracleIsNeverAboveARunThatMeetsTheBoundEverywhere(capture: String) throws {
        let contents = try importedCapture(capture)
        for profile in ProfileStore.builtIns {
            let evaluation = Evaluator(setup: profile.simulationSetup, bound: profile.stalenessBound, name: profile.name)
                .evaluate(contents)
            let oracle = evaluation.oracle
            #expect(oracle.meetsBoundEverywhere, "\(capture) \(profile.name): the oracle misses its own bound")
            for run in evaluation.runs where run.name != "oracle" && run.meetsBoundEverywhere {
                #expect(
                    oracle.energy <= run.energy + 1e-9,
                    "\(capture) \(profile.name): oracle \(oracle.energy) mAh above \(run.name) \(run.energy) mAh")
            }
            // The interval baseline, when there is one, meets the bound at p95 as its definition says.
            if let interval = evaluation.interval { #expect(interval.figures.staleness.p95 <= profile.stalenessBound) }
            // The split by true speed accounts for all of the profile's and the oracle's charge and all of the
            // track's time, and its first class is the stopped charge.
            let classes = evaluation.bySpeed
            let context = "\(capture) \(profile.name)"
            #expect(classes.count == EvaluationMath.speedClassLimits.count, "\(context)")
            #expect(abs(classes.reduce(0) { $0 + $1.energy } - evaluation.policy.energy) < 1e-9, "\(context)")
            #expect(abs(classes.reduce(0) { $0 + $1.oracleEnergy } - oracle.energy) < 1e-9, "\(context)")
            #expect(abs(classes.reduce(0) { $0 + $1.seconds } - evaluation.duration) < 1e-6, "\(context)")
            #expect(abs((classes.first?.energy ?? 0) - evaluation.policy.energyWhileStopped) < 1e-9, "\(context)")
            #expect(abs((classes.first?.oracleEnergy ?? 0) - oracle.energyWhileStopped) < 1e-9, "\(context)")
        }
    }
}
