import Daemon
import GPSModel
import SystemInterface
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp for one test, removed by `remove()`.
struct ScratchDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/lodestar-outputs-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } }
        path = try #require(made.map { String(cString: $0) }, "mkdtemp failed")
    }

    func remove() {
        removeTree(path)
    }

    private func removeTree(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            for entry in directoryEntries(path) { removeTree(path + "/" + entry) }
            _ = rmdir(path)
        } else {
            _ = unlink(path)
        }
    }
}

/// `2026-11-30T23:59:58Z` as a UTCTime.
func utc(_ text: String) throws -> UTCTime {
    try #require(UTCTime(iso8601: Array(text.utf8)), "not a UTC time: \(text)")
}

func fileText(_ path: String) -> String {
    readFile(path).map { String(decoding: $0, as: UTF8.self) } ?? ""
}

func sampleLocation(at time: UTCTime, latitude: Double = 52.370216, longitude: Double = 4.895168) -> Location {
    Location(
        timestamp: time, latitude: latitude, longitude: longitude, altitude: 3.2, horizontalAccuracy: 2.5,
        speed: 1.5, course: 90, fixMode: .threeD, satellitesUsed: 11, hdop: 0.8, device: "/dev/ttyACM0")
}
