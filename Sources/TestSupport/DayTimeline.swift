import Capture
import Foundation
import GPSModel
import ReceiverEmulation
import Simulation

/// A long day for a tracker, made of the repository's real recordings: drives, each followed by a stretch
/// parked (the stationary recording, repeated). Every piece is moved to start where the one before ended,
/// in place and in time, so the day reads as one vehicle's: a car that drives, parks for a while, drives
/// on. Used to replay hours through an emulated receiver at high speed (the store-and-forward tests and
/// bench/store-forward-day.sh).
public enum DayTimeline {
    /// The drives, in the order they are used (the list repeats for a long day).
    public static let drives = [
        "munich-urban-stopgo-31m.nmea", "garmin-geko201-regensburg-drive-26m.nmea", "ublox-ubx-cartrip-15m.ubx",
        "garmin-drive-reno-tahoe-2h43m.nmea",
    ]
    public static let parked = "stationary-netherlands-20m.nmea"

    /// Epochs for `hours` of day starting at `start` (UTC), capture seconds from 0; after each drive the car
    /// parks for `parkedMinutes`.
    /// `startingAt` moves the whole day so it starts at that latitude and longitude (nil: where the first
    /// drive was recorded).
    public static func epochs(
        hours: Double, parkedMinutes: Double = 90, start: UTCTime = UTCTime(seconds: 1_780_293_600),
        startingAt origin: (latitude: Double, longitude: Double)? = nil
    ) throws -> [EmulatedReceiver.Epoch] {
        let drives = try Self.drives.map { try fixes(of: $0) }
        let parked = try fixes(of: Self.parked)
        let end = hours * 3600
        var day: [EmulatedReceiver.Epoch] = []
        var t = 0.0
        var position: (latitude: Double, longitude: Double)? = origin
        var index = 0
        while t < end {
            let before = day.count
            defer { if day.count == before { t = end } }  // nothing fits before the end any more
            let drive = drives[index % drives.count]
            index += 1
            append(drive, upTo: end, into: &day, t: &t, position: &position, start: start)
            var parkedUntil = min(t + parkedMinutes * 60, end)
            while t < parkedUntil {
                let before = t
                append(parked, upTo: parkedUntil, into: &day, t: &t, position: &position, start: start)
                if t <= before { parkedUntil = t }  // nothing was added: stop rather than spin
            }
        }
        return day
    }

    /// A capture's fixes with a position, as (seconds from its first, fix).
    private static func fixes(of name: String) throws -> [(Double, Fix)] {
        let capture = try importedCapture(name)
        var fixes: [(Double, Fix)] = []
        CaptureReplayer(capture).run(onEvent: { t, event in
            if case .fix(let fix) = event, fix.hasPosition { fixes.append((t, fix)) }
        })
        guard let first = fixes.first?.0 else { return [] }
        return fixes.map { ($0.0 - first, $0.1) }
    }

    /// Appends `piece` moved to start at `position` and at `t` + 1 s, until `limit`.
    private static func append(
        _ piece: [(Double, Fix)], upTo limit: Double, into day: inout [EmulatedReceiver.Epoch], t: inout Double,
        position: inout (latitude: Double, longitude: Double)?, start: UTCTime
    ) {
        guard let first = piece.first?.1, let latitude = first.latitude, let longitude = first.longitude else { return }
        let shift = position.map { ($0.latitude - latitude, $0.longitude - longitude) } ?? (0, 0)
        let base = day.isEmpty ? 0 : t + 1
        for (offset, original) in piece {
            let when = base + offset
            guard when < limit else { break }
            var fix = original
            fix.latitude = original.latitude.map { $0 + shift.0 }
            fix.longitude = original.longitude.map { $0 + shift.1 }
            fix.time = start.adding(seconds: when)
            day.append(EmulatedReceiver.Epoch(t: when, fix: fix))
            t = when
            if let latitude = fix.latitude, let longitude = fix.longitude { position = (latitude, longitude) }
        }
    }

    /// One piece of a `track`: a recording driven once, or a stationary recording repeated for `hours`.
    public enum Piece: Sendable {
        case drive(String)
        case parked(String, hours: Double)
    }

    /// The true track of a day made of `pieces`, for evaluating a profile on it (the day benchmark and its
    /// test): each drive moved to start where the day stands, one second after its last fix, and after a park
    /// begun from rest if its recording starts at speed (`startedFromRest`); each parked
    /// stretch repeats its recording with every repetition's first fix on the spot where the car stopped,
    /// so a stationary receiver's wander stays around the spot and does not drift away with each repetition.
    public static func track(_ pieces: [Piece], start: UTCTime = UTCTime(seconds: 1_780_293_600)) throws -> TrueTrack {
        var points: [(t: Double, location: Location)] = []
        var t = -1.0
        var here: (latitude: Double, longitude: Double)?
        var afterPark = false
        for piece in pieces {
            switch piece {
            case .drive(let name):
                var drive = try locations(of: name)
                if afterPark { drive = startedFromRest(drive) }
                afterPark = false
                add(drive, at: t + 1, from: here, upTo: .infinity, into: &points, start: start)
                if let last = points.last { (t, here) = (last.t, (last.location.latitude, last.location.longitude)) }
            case .parked(let name, let hours):
                let parked = try locations(of: name)
                let spot = here
                let end = t + hours * 3600
                while t < end {
                    let before = t
                    add(parked, at: t + 1, from: spot, upTo: end, into: &points, start: start)
                    t = points.last?.t ?? t
                    if t <= before { break }  // nothing fits any more
                }
                t = max(t, end)
                afterPark = true
            }
        }
        return TrueTrack(points: points)
    }

    /// m/s²: how a drive that follows a park pulls away when its recording starts at speed (`startedFromRest`).
    /// An ordinary start from a parking space; gentler starts would flatter how soon a departure is seen.
    public static let startAcceleration = 2.0

    /// `drive` begun from rest when its recording starts at speed (the Reno recording starts at 23 m/s): no car
    /// leaves a park at motorway speed, and with a teleport the departure's figures (how far the car went
    /// before the application saw it) would measure the jump, not the policy. A start along the first fix's
    /// course at about `startAcceleration`, whole seconds long, ends on the first fix at its speed; the
    /// recording follows unchanged, later by the start's length.
    static func startedFromRest(_ drive: [(t: Double, location: Location)]) -> [(t: Double, location: Location)] {
        guard let first = drive.first?.location, let speed = first.speed, speed > 1,
            let course = first.course ?? drive.first(where: { Geodesy.distance(from: first, to: $0.location) > 5 })
                .map({ bearing(from: first, to: $0.location) })
        else { return drive }
        let seconds = (speed / startAcceleration).rounded(.up)
        let acceleration = speed / seconds
        let length = acceleration * seconds * seconds / 2
        let back = (course + 180) * .pi / 180
        var start: [(t: Double, location: Location)] = []
        for step in 0..<Int(seconds) {
            let elapsed = Double(step)
            let behind = length - acceleration * elapsed * elapsed / 2
            var location = first
            (location.latitude, location.longitude) = Geodesy.coordinate(
                north: behind * cos(back), east: behind * sin(back), from: first)
            location.speed = acceleration * elapsed
            location.course = course
            start.append((elapsed, location))
        }
        return start + drive.map { ($0.t + seconds, $0.location) }
    }

    /// Degrees clockwise from north, from `a` towards `b` (near enough for a few hundred metres).
    private static func bearing(from a: Location, to b: Location) -> Double {
        let (north, east) = Geodesy.offset(of: b, from: a)
        let degrees = atan2(east, north) * 180 / .pi
        return degrees < 0 ? degrees + 360 : degrees
    }

    /// A recording's locations, as the live pipeline assembles them, seconds from its first.
    private static func locations(of name: String) throws -> [(t: Double, location: Location)] {
        let points = TrueTrack(try importedCapture(name)).points
        guard let first = points.first?.t else { return [] }
        return points.map { ($0.t - first, $0.location) }
    }

    /// Appends `piece` from `t`, moved so its first fix lies at `origin` (where it was, without one), up to `limit`.
    private static func add(
        _ piece: [(t: Double, location: Location)], at t: Double, from origin: (latitude: Double, longitude: Double)?,
        upTo limit: Double, into points: inout [(t: Double, location: Location)], start: UTCTime
    ) {
        guard let first = piece.first?.location else { return }
        let shift = origin.map { ($0.latitude - first.latitude, $0.longitude - first.longitude) } ?? (0, 0)
        for (offset, original) in piece {
            let when = t + offset
            guard when < limit else { break }
            var location = original
            location.latitude += shift.0
            location.longitude += shift.1
            location.timestamp = start.adding(seconds: when)
            points.append((when, location))
        }
    }
}
