import SystemInterface
import Foundation
import Lodestar
import Testing

/// `$LODESTAR_PROFILE_DIR` replaces /etc/lodestar/profiles. Run through the built binary so the variable is
/// set for that process only, not for the tests running beside this one.
@Suite struct ProfileDirectoryTests {
    private func lodestar(_ arguments: [String], directory: String, folder: String) throws -> (Int32, String, String) {
        let binary = try #require(
            ExecutableTests.executable, "build the lodestar executable first (swift build --build-tests)")
        let process = try ChildProcess(
            executable: binary, arguments: arguments, environment: [ProfileStore.directoryVariable: directory],
            standardOutput: folder + "/out", standardError: folder + "/err")
        let status = try #require(process.waitForExit(timeout: 20), "lodestar \(arguments) did not end")
        let text = { (name: String) in (try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? "" }
        // A normal exit's status is in the second byte of the raw wait status.
        return ((status >> 8) & 0xFF, text("out"), text("err"))
    }

    @Test func theEnvironmentVariableNamesTheProfileDirectory() throws {
        let folder = NSTemporaryDirectory() + "lodestar-profile-dir-\(UUID().uuidString)"
        let profiles = folder + "/profiles"
        try FileManager.default.createDirectory(atPath: profiles, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(#"{"description": "the shop's van", "receiver": {"model": "mt3339"}}"#.utf8)
            .write(to: URL(fileURLWithPath: profiles + "/van.json"))
        try Data(#"{"policy": {"maximumAge": "old"}}"#.utf8).write(to: URL(fileURLWithPath: profiles + "/broken.json"))

        let (showCode, shown, _) = try lodestar(["profiles", "show", "van"], directory: profiles, folder: folder)
        #expect(showCode == 0)
        #expect(shown.contains(#""name": "van""#))
        #expect(shown.contains(#""model": "mt3339""#))

        let (listCode, listed, _) = try lodestar(["profiles", "list"], directory: profiles, folder: folder)
        #expect(listCode == 0)
        #expect(listed.contains("van        the shop's van  (\(profiles)/van.json)"))
        #expect(listed.contains("broken     invalid: 1 problem"))

        let (brokenCode, _, error) = try lodestar(["profiles", "show", "broken"], directory: profiles, folder: folder)
        #expect(brokenCode == 78)
        #expect(error.contains("\(profiles)/broken.json: policy.maximumAge: is a string, not a number"))

        let (missingCode, _, _) = try lodestar(["profiles", "show", "truck"], directory: profiles, folder: folder)
        #expect(missingCode == 66)
    }
}
