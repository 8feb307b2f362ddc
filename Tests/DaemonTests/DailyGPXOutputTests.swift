import Daemon
import GPSModel
import SystemInterface
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct DailyGPXOutputTests {
    private func output(_ directory: String, keepDays: Int? = nil) -> DailyGPXOutput {
        var settings = DaemonConfiguration.GPXOutput()
        settings.keepDays = keepDays
        return DailyGPXOutput(directory: directory, settings: settings)
    }

    /// A location at each of `times`, in order.
    private func write(_ output: DailyGPXOutput, _ times: String..., latitude: Double = 52.37) throws {
        for time in times {
            let at = try utc(time)
            try output.write(.location(sampleLocation(at: at, latitude: latitude)), now: at)
        }
    }

    @Test func theDayFileIsValidGPXAfterEveryPoint() throws {
        try withScratchDirectory { directory in
            let gpx = output(directory + "/gpx")
            let path = directory + "/gpx/2026-11-30.gpx"
            for (index, second) in ["00", "01", "02"].enumerated() {
                try write(gpx, "2026-11-30T10:00:\(second)Z", latitude: 52.37 + Double(index) / 1000)
                #expect(try GPSBabel.trackPointCount(path) == index + 1)
            }
            // Regime and event records are not GPX's business.
            try gpx.write(.regime(.off, reason: "stationary", t: 1, at: utc("2026-11-30T10:00:03Z")), now: utc("2026-11-30T10:00:03Z"))
            #expect(try GPSBabel.trackPointCount(path) == 3)
            gpx.close()
            #expect(fileText(path).hasSuffix("</trkpt>\n</trkseg>\n</trk>\n</gpx>\n"))
        }
    }

    @Test func aRestartTheSameDayAppendsANewSegment() throws {
        try withScratchDirectory { directory in
            let path = directory + "/2026-11-30.gpx"
            let first = output(directory)
            try write(first, "2026-11-30T10:00:00Z", "2026-11-30T10:00:01Z")
            first.close()
            let second = output(directory)
            try write(second, "2026-11-30T11:00:00Z")
            second.close()
            let text = fileText(path)
            #expect(occurrences(of: "<trkseg>", in: text) == 2)
            #expect(occurrences(of: "<?xml", in: text) == 1)
            #expect(try GPSBabel.trackPointCount(path) == 3)
        }
    }

    @Test func aFileCutShortByACrashIsRepairedAndContinued() throws {
        try withScratchDirectory { directory in
            let path = directory + "/2026-11-30.gpx"
            let crashed = output(directory)
            try write(crashed, "2026-11-30T10:00:00Z", "2026-11-30T10:00:01Z")
            // Not closed, as after a crash: the file is complete already.
            #expect(try GPSBabel.trackPointCount(path) == 2)
            // A crash in the middle of the next point: half a point, no closing tags.
            let cut = Array(fileText(path).utf8).dropLast("</trkseg>\n</trk>\n</gpx>\n".utf8.count)
            let torn = Array(cut) + Array("<trkpt lat=\"52.3\" lon=\"4.8\">\n  <ele>3".utf8)
            #expect(torn.withUnsafeBytes { bytes in
                let descriptor = open(path, O_WRONLY | O_TRUNC)
                defer { close(descriptor) }
                return writeAll(descriptor, bytes)
            })
            let restarted = output(directory)
            try write(restarted, "2026-11-30T10:05:00Z")
            #expect(try GPSBabel.trackPointCount(path) == 3)
            withExtendedLifetime(crashed) {}
        }
    }

    @Test func eachUTCDayHasItsFileAndOldDaysAreDeleted() throws {
        try withScratchDirectory { directory in
            let gpx = output(directory, keepDays: 2)
            try write(gpx, "2026-11-28T23:59:59Z", "2026-11-29T00:00:00Z", "2026-11-29T12:00:00Z")
            #expect(directoryEntries(directory).sorted() == ["2026-11-28.gpx", "2026-11-29.gpx"])
            try write(gpx, "2026-11-30T00:00:01Z")
            gpx.close()
            #expect(directoryEntries(directory).sorted() == ["2026-11-29.gpx", "2026-11-30.gpx"])
            #expect(try GPSBabel.trackPointCount(directory + "/2026-11-29.gpx") == 2)
            #expect(try GPSBabel.trackPointCount(directory + "/2026-11-30.gpx") == 1)
        }
    }

    @Test func aFileThatIsNotGPXIsSetAsideNotOverwritten() throws {
        try withScratchDirectory { directory in
            let path = directory + "/2026-11-30.gpx"
            #expect(Array("not gpx".utf8).withUnsafeBytes { bytes in
                let descriptor = open(path, O_WRONLY | O_CREAT, 0o644)
                defer { close(descriptor) }
                return writeAll(descriptor, bytes)
            })
            let gpx = output(directory)
            try write(gpx, "2026-11-30T10:00:00Z")
            gpx.close()
            #expect(fileText(path + ".unreadable") == "not gpx")
            #expect(try GPSBabel.trackPointCount(path) == 1)
        }
    }
}

func occurrences(of piece: String, in text: String) -> Int {
    let pattern = Array(piece.utf8)
    let bytes = Array(text.utf8)
    guard bytes.count >= pattern.count else { return 0 }
    return (0...(bytes.count - pattern.count)).filter { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }.count
}

/// gpsbabel, the reference GPX reader (Debian package `gpsbabel`).
enum GPSBabel {
    /// Track points in a GPX file as gpsbabel reads them: `-t -i gpx -f FILE -o unicsv -F -` prints a header
    /// line and one line per point; anything on stderr (a parse error) fails the test.
    static func trackPointCount(_ path: String) throws -> Int {
        let executable = try #require(findExecutable("gpsbabel"), "gpsbabel is not installed (apt-get install gpsbabel)")
        let output = path + ".unicsv"
        let errors = path + ".stderr"
        defer {
            _ = unlink(output)
            _ = unlink(errors)
        }
        let process = try ChildProcess(
            executable: executable, arguments: ["-t", "-i", "gpx", "-f", path, "-o", "unicsv", "-F", "-"],
            standardOutput: output, standardError: errors)
        // A guard against a hung reader, not a measure of speed.
        let status = process.waitForExit(timeout: 60)
        let errorText = fileText(errors)
        #expect(status == 0, "gpsbabel: \(errorText)")
        #expect(errorText.isEmpty, "gpsbabel: \(errorText)")
        return max(0, fileText(output).split(whereSeparator: \.isNewline).count - 1)
    }
}
