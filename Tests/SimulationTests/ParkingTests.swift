@testable import Simulation
import GPSModel
import Policy
import Testing

/// Metres per degree on the equator (mean sphere).
private let metresPerDegree = Geodesy.meanEarthRadius * .pi / 180

/// A location `east` metres east and `north` metres north of (0, 0) at second `t`.
private func at(_ t: Double, east: Double, north: Double = 0) -> Location {
    Location(
        timestamp: UTCTime(seconds: 1_796_000_000 + Int64(t)), latitude: north / metresPerDegree,
        longitude: east / metresPerDegree, fixMode: .threeD)
}

/// `ParkRule`'s parks and departures on hand-made tracks: a park wanders, a departure goes for good.
@Suite struct ParkFinderTests {
    /// 20 minutes parked whose fixes wander up to 200 m (past the 100 m circle, within the 250 m it takes to
    /// leave), then a drive east at 10 m/s; a location is given 30 s into the drive. One park, left at the last
    /// fix within the circle, seen 30 s and 300 m later.
    @Test func aWanderingParkIsOneParkAndItsDepartureIsTheLastFixInTheCircle() {
        var finder = ParkFinder(rule: ParkRule())
        for second in 0..<1200 {
            // Every fifth minute a wander of 200 m north for a few seconds; otherwise within 20 m.
            let north = second % 300 < 5 && second > 0 ? 200.0 : Double(second % 7) * 3
            finder.truth(Double(second), at(Double(second), east: 0, north: north))
        }
        for second in 1200..<1300 {
            let t = Double(second)
            finder.truth(t, at(t, east: (t - 1199) * 10))
            if second == 1229 { finder.delivered(t, at(t, east: (t - 1199) * 10)) }
        }
        let parks = finder.finish()
        #expect(parks.count == 1, "\(parks)")
        let park = parks[0]
        #expect(park.start == 0)
        // About 100 m east: the last fix within the circle, whose centre the wander moves a few metres north.
        let departure = park.departure ?? 0
        #expect((1207...1210).contains(departure), "\(park)")
        #expect(park.seenAfter == 1229 - departure, "\(park)")
        #expect(abs((park.seenAfterMetres ?? 0) - (1229 - departure) * 10) < 1, "\(park)")
    }

    /// A park that ends in a wander 150 m off (past the circle), the receiver reporting 0 m/s there for 10 s, then
    /// a drive on from that spot: the departure is the last fix that stood, not the last within the circle, and
    /// the wander's jump is not counted as metres travelled. The same fixes without a speed date it as before.
    @Test func aDepartureIsDatedAtTheLastFixThatStoodWhereverItWandered() {
        for reportsSpeed in [true, false] {
            var finder = ParkFinder(rule: ParkRule())
            func fix(_ t: Double, east: Double, speed: Double) -> Location {
                var location = at(t, east: east)
                location.speed = reportsSpeed ? speed : nil
                return location
            }
            for second in 0..<700 { finder.truth(Double(second), fix(Double(second), east: 0, speed: 0)) }
            for second in 700..<710 { finder.truth(Double(second), fix(Double(second), east: 150, speed: 0)) }
            for second in 710..<740 {
                let t = Double(second)
                finder.truth(t, fix(t, east: 150 + (t - 709) * 10, speed: 10))
                if second == 715 { finder.delivered(t, fix(t, east: 150 + (t - 709) * 10, speed: 10)) }
            }
            let parks = finder.finish()
            #expect(parks.count == 1, "\(parks)")
            if reportsSpeed {
                #expect(parks[0].departure == 709, "\(parks)")
                #expect(parks[0].seenAfter == 6, "\(parks)")
                #expect(abs((parks[0].seenAfterMetres ?? 0) - 60) < 1, "\(parks)")
            } else {
                #expect(parks[0].departure == 699, "\(parks)")
                #expect(parks[0].seenAfter == 16, "\(parks)")
                #expect(abs((parks[0].seenAfterMetres ?? 0) - 210) < 1, "\(parks)")
            }
        }
    }

    /// A location given before the departure is confirmed (the car is 150 m out, not yet 250 m) dates the
    /// sighting; one given inside the circle does not.
    @Test func aLocationBeyondTheCircleSeenBeforeTheDepartureIsConfirmedCounts() {
        var finder = ParkFinder(rule: ParkRule())
        for second in 0..<700 { finder.truth(Double(second), at(Double(second), east: 0)) }
        finder.delivered(699, at(699, east: 0))
        for second in 700..<760 {
            let t = Double(second)
            finder.truth(t, at(t, east: (t - 699) * 5))
            if second == 730 { finder.delivered(t, at(t, east: (t - 699) * 5)) }
        }
        let parks = finder.finish()
        #expect(parks.count == 1)
        #expect(parks[0].departure == 719, "\(parks)")  // 100 m east
        #expect(parks[0].seenAfter == 11, "\(parks)")
        #expect(abs((parks[0].seenAfterMetres ?? 0) - 55) < 1, "\(parks)")
    }

    /// Standing 5 minutes is a stop, not a park; a track that ends parked has a park without a departure, and a
    /// departure nobody was told of stays unseen.
    @Test func shortStandsAreNotParksAndAnUnseenDepartureStaysUnseen() {
        var finder = ParkFinder(rule: ParkRule())
        var t = 0.0
        for _ in 0..<300 { finder.truth(t, at(t, east: 0)); t += 1 }
        for step in 1...60 { finder.truth(t, at(t, east: Double(step) * 15)); t += 1 }
        let parkStart = t
        for _ in 0..<900 { finder.truth(t, at(t, east: 900)); t += 1 }
        for step in 1...60 { finder.truth(t, at(t, east: 900 + Double(step) * 15)); t += 1 }
        for _ in 0..<900 { finder.truth(t, at(t, east: 1800)); t += 1 }
        let parks = finder.finish()
        #expect(parks.count == 2, "\(parks)")
        // The park starts with the approach's last fixes within the 250 m of the spot.
        #expect(parks[0].start <= parkStart && parks[0].start >= parkStart - 20, "\(parks)")
        #expect(parks[0].departure != nil && parks[0].seenAfter == nil)
        #expect(parks[1].departure == nil)
        let figures = ParkingFigures(
            rule: ParkRule(), parks: parks, parkedSeconds: 0, energyParked: 0, energyMoving: 0, oracleEnergyParked: 0,
            oracleEnergyMoving: 0, wakesWhileParked: 0)
        #expect(figures.unseenDepartures == 1)
        #expect(figures.departureLatency == nil)
    }

    /// Staleness in a park is scored at its centre: once the stretch has lasted 10 minutes, a true fix or a
    /// delivered location that wandered 200 m is the park, and a stale location is judged from the centre. The
    /// fix that leaves by more than 250 m ends the park, and is judged where it is.
    @Test func aParksWanderIsScoredAtItsCentre() {
        var finder = ParkFinder(rule: ParkRule())
        var meter = RunMeter(model: .ublox8, bound: 100)
        for second in 0..<600 {
            finder.truth(Double(second), at(Double(second), east: 0))
            #expect(finder.circle == nil)
        }
        finder.truth(600, at(600, east: 0))
        let circle = finder.circle
        #expect(circle != nil && circle?.radius == 250)
        meter.delivered(at(601, east: 0, north: -180), at: 601)
        finder.truth(601, at(601, east: 0, north: 200))
        // 380 m between the two raw fixes; both are the park.
        #expect(meter.judge(at(601, east: 0, north: 200), at: 601, park: finder.circle) == 0)
        #expect((meter.judge(at(601, east: 0, north: 200), at: 601) ?? 0) > 379)
        // A stale location from before the park, 400 m west: judged from the centre.
        meter.delivered(at(602, east: -400), at: 602)
        let fromCentre = meter.judge(at(602, east: 0, north: 200), at: 602, park: finder.circle) ?? 0
        #expect(abs(fromCentre - 400) < 1, "\(fromCentre)")
        finder.truth(603, at(603, east: 300))
        #expect(finder.circle == nil)
        meter.delivered(at(603, east: 0), at: 603)
        let departed = meter.judge(at(603, east: 300), at: 603, park: finder.circle) ?? 0
        #expect(abs(departed - 300) < 1, "\(departed)")
    }

    /// Wakes are counted where the receiver comes up inside a parked stretch.
    @Test func wakesAreCountedInsideParkedStretches() {
        let timeline = [
            ReceiverInterval(start: 0, end: 10, state: .tracking), ReceiverInterval(start: 10, end: 50, state: .standby),
            ReceiverInterval(start: 50, end: 52, state: .acquiring), ReceiverInterval(start: 52, end: 200, state: .off),
            ReceiverInterval(start: 200, end: 210, state: .tracking), ReceiverInterval(start: 210, end: 300, state: .off),
            ReceiverInterval(start: 300, end: 301, state: .tracking),
        ]
        #expect(ParkFinder.wakes(timeline, within: [(0, 100), (250, 400)]) == 2)
        #expect(ParkFinder.wakes(timeline, within: [(100, 250)]) == 1)
        #expect(ParkFinder.wakes(timeline, within: []) == 0)
    }
}
