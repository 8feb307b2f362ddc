import Foundation
import JSON
import Policy
import Testing

@testable import Lodestar
@testable import LodestarCLI

private func write(_ text: String, to path: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// The problems of parsing `text`, empty when it is valid.
private func problems(_ text: String) -> [ProfileProblem] {
    do throws(ProfileError) {
        _ = try Profile.parse(text, file: "test.json", defaultName: "test")
        return []
    } catch {
        return error.problems
    }
}

private func parse(_ text: String) throws -> Profile {
    try Profile.parse(text, file: "test.json", defaultName: "test")
}

@Suite struct BuiltInProfileTests {
    @Test func theSixBuiltInsExist() {
        #expect(ProfileStore.builtInNames == ["car", "bike", "walk", "boat", "asset", "always-on"])
    }

    @Test(arguments: ProfileStore.builtInNames)
    func builtInParsesWithoutProblems(name: String) throws {
        let entry = try #require(BuiltInProfiles.texts.first { $0.name == name })
        var profile = Profile(name: name)
        for text in entry.shared + [entry.json] {
            profile = try Profile.parse(text, file: "built-in \(name)", base: profile)
        }
        #expect(ProfileStore.builtIn(name) == profile)
        #expect(profile.name == name)
        #expect(!profile.description.isEmpty)
        #expect(profile.policy.validate().isEmpty)
        #expect(profile.receiver.validate().isEmpty)
    }

    /// Each text of a built-in (shared or its own) states only what makes it differ: no key whose value the
    /// texts before it (or the defaults, or the named receiver model) already give, so copied defaults do not
    /// creep back. The one exception is the built-in's own `stalenessBound`, which every built-in states.
    @Test(arguments: ProfileStore.builtInNames)
    func builtInTextsStateNoValueTheyWouldGetAnyway(name: String) throws {
        let entry = try #require(BuiltInProfiles.texts.first { $0.name == name })
        let texts = entry.shared + [entry.json]
        var base = Profile(name: name)
        for (index, text) in texts.enumerated() {
            let document = try JSONParser.parse(Array(text.utf8))
            // Under `receiver`, a named model replaces the receiver: its own values are then what a key repeats.
            var reference = base
            if case .string(let modelName)? = document.value(at: "receiver.model"),
                let model = ReceiverModel.named(modelName)
            {
                reference.receiver = model
            }
            let stated = Self.leaves(of: document)
            #expect(!stated.isEmpty, "\(name): text \(index) states nothing")
            for (path, value) in stated {
                if index == texts.count - 1 && path == "stalenessBound" { continue }
                let given = (path == "receiver.model" ? base : reference).jsonValue.value(at: path)
                #expect(
                    given.map(JSONWriter.text) != JSONWriter.text(value),
                    "\(name): text \(index) states \(path) = \(JSONWriter.text(value)), which it would get anyway")
            }
            base = try Profile.parse(text, file: "built-in \(name)", base: base)
        }
    }

    /// The key paths and values of a document's leaves (anything but a non-empty object).
    private static func leaves(of value: JSONValue, at path: String = "") -> [(path: String, value: JSONValue)] {
        guard case .object(let members) = value, !members.isEmpty else { return [(path, value)] }
        return members.flatMap { leaves(of: $0.value, at: path.isEmpty ? $0.key : "\(path).\($0.key)") }
    }

    @Test(arguments: ProfileStore.builtInNames)
    func showThenValidateRoundTrips(name: String) throws {
        let (code, shown, error) = run(["profiles", "show", name])
        #expect(code == 0)
        #expect(error.isEmpty)
        let folder = try temporaryFolder("profiles")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/edited.json"
        try write(shown, to: path)
        let (validateCode, output, validateError) = run(["profiles", "validate", path])
        #expect(validateCode == 0, "\(validateError)")
        #expect(output == "\(path): valid\n")
        #expect(try ProfileStore.system.load(nameOrPath: path) == ProfileStore.builtIn(name))
    }

    /// profiles/NAME.json is `lodestar profiles show NAME > profiles/NAME.json`: they never drift.
    @Test(arguments: ProfileStore.builtInNames)
    func repositoryFileEqualsShow(name: String) throws {
        let file = repositoryRoot.appendingPathComponent("profiles/\(name).json")
        let stored = try String(contentsOf: file, encoding: .utf8)
        let (_, shown, _) = run(["profiles", "show", name])
        #expect(stored == shown, "regenerate: lodestar profiles show \(name) > profiles/\(name).json")
    }

    @Test func repositoryFolderHoldsExactlyTheBuiltIns() throws {
        let files = try FileManager.default.contentsOfDirectory(
            atPath: repositoryRoot.appendingPathComponent("profiles").path)
        #expect(Set(files) == Set(ProfileStore.builtInNames.map { $0 + ".json" }))
    }

    @Test func carDetectsTwoMinuteStopsButNotShortLights() throws {
        let car = try #require(ProfileStore.builtIn("car"))
        #expect(car.updates.activityType == .automotiveNavigation)
        let window = try #require(car.policy.stationary.automotiveNavigation.window)
        // Every stop of two minutes or more in the drives must be detected, with room for braking.
        #expect(window <= 110)
        // Most red lights are shorter.
        #expect(window >= 60)
    }

    @Test func startEventsFollowTheProfile() throws {
        let asset = try #require(ProfileStore.builtIn("asset"))
        #expect(asset.startEvents == [.startSignificantChange])
        #expect(asset.exitRegime == .off)
        let walk = try #require(ProfileStore.builtIn("walk"))
        #expect(walk.startEvents == [.startUpdates(walk.updates)])
        // No built-in batches (walk's comment in BuiltInProfiles says why); a profile that does asks once.
        var batching = walk
        batching.updates.desiredAccuracy = .best
        batching.deferred = Profile.DeferredUpdates(untilTraveled: 200, timeout: 300)
        #expect(
            batching.startEvents == [
                .startUpdates(batching.updates), .allowDeferredUpdates(untilTraveled: 200, timeout: 300),
            ])
        let alwaysOn = try #require(ProfileStore.builtIn("always-on"))
        #expect(alwaysOn.updates.desiredAccuracy == .bestForNavigation)
        #expect(!alwaysOn.updates.pausesAutomatically)
        #expect(alwaysOn.startEvents == [.startUpdates(alwaysOn.updates)])
        #expect(alwaysOn.exitRegime == .continuous)
    }

    /// In its own text: a built-in without the key would still parse, silently taking the default bound.
    @Test func everyBuiltInStatesAStalenessBound() throws {
        #expect(ProfileStore.builtIns.count == BuiltInProfiles.texts.count, "a built-in does not parse")
        for (name, _, text) in BuiltInProfiles.texts {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            let bound = try #require(object["stalenessBound"] as? Double, "\(name) states no stalenessBound")
            #expect(bound > 0, "\(name): stalenessBound \(bound)")
            #expect(ProfileStore.builtIn(name)?.stalenessBound == bound, "\(name): the bound stated is not the one used")
        }
    }
}

@Suite struct ProfileParsingTests {
    @Test func aMissingKeyTakesItsDefault() throws {
        let profile = try parse(#"{"updates": {"activityType": "fitness"}}"#)
        #expect(profile.name == "test")
        #expect(profile.updates == UpdatesConfiguration(activityType: .fitness))
        #expect(profile.policy == PolicyConfiguration())
        #expect(profile.receiver == .genericNMEA)
        #expect(profile.exitRegime == .continuous)
        #expect(profile.deferred == nil)
    }

    @Test func receiverOverridesApplyOnTopOfTheModel() throws {
        let profile = try parse(
            #"{"receiver": {"model": "mt3339", "current": {"standby": 1.5}, "timeToFirstFix": {"hotWindow": 3600}, "#
                + #""supportedRegimes": ["continuous", "off"]}}"#)
        var expected = ReceiverModel.mt3339
        expected.current.standby = 1.5
        expected.timeToFirstFix.hotWindow = 3600
        expected.supportedRegimes = [.continuous, .off]
        #expect(profile.receiver == expected)
    }

    /// Every field away from its default survives jsonText → parse, so writer and reader name the same keys.
    @Test func everyKnobRoundTrips() throws {
        var profile = Profile(name: "every-knob", description: "all \"changed\"")
        profile.updates = UpdatesConfiguration(
            desiredAccuracy: .bestForNavigation, distanceFilter: nil, activityType: .otherNavigation,
            pausesAutomatically: false, autoResume: false, accuracyLimit: 42.5)
        profile.deferred = Profile.DeferredUpdates(untilTraveled: 1234, timeout: nil)
        profile.significantChange = true
        profile.stalenessBound = 77
        profile.exitRegime = .standby
        var policy = PolicyConfiguration()
        policy.maximumAge = 11
        policy.warmUp = 12
        policy.warmUpAccuracyLimit = 13
        for (offset, activity) in ActivityType.allCases.enumerated() {
            policy.stationary[activity] = StationaryRule(
                radius: 20 + Double(offset), window: offset == 0 ? nil : 100 + Double(offset),
                movingSpeed: 1.25, probeInterval: 7, probeGrowth: 1.1, maximumProbeInterval: 70 + Double(offset))
        }
        policy.dutyCycle.hundredMeters = DutyCycleRule(minimumInterval: 16, maximumInterval: 121)
        policy.dutyCycle.kilometer = DutyCycleRule(minimumInterval: 61, maximumInterval: 601)
        policy.dutyCycle.threeKilometers = DutyCycleRule(minimumInterval: 181, maximumInterval: 1201)
        policy.dutyCycle.reduced = DutyCycleRule(minimumInterval: 901, maximumInterval: 3601)
        policy.acquisition.timeout = 61
        policy.acquisition.backoffFactor = 3
        policy.acquisition.maximumBackoff = 1801
        policy.acquisition.wakeMargin = 11
        policy.deferredBufferCapacity = 99
        policy.significantChange.distance = 501
        policy.significantChange.minimumInterval = 301
        policy.significantChange.wakeInterval = 302
        policy.significantChange.maximumWakeInterval = 1802
        policy.significantChange.accuracyLimit = 201
        policy.requestTimeout = 16
        policy.reducedGridSize = 2001
        profile.policy = policy
        var receiver = ReceiverModel.sirf4
        receiver.powerControl = .ubx
        receiver.connection = .uart
        receiver.current = ReceiverCurrents(
            acquisition: 30.1, tracking: 20.2, powerSave: 5.3, standby: 0.0235, backup: 0.00001, off: 0.5)
        receiver.timeToFirstFix = TimeToFirstFix(hot: 1.5, warm: 26, cold: 31, hotWindow: 7201)
        receiver.backupSupplyWhenOff = true
        profile.receiver = receiver
        let reread = try parse(profile.jsonText)
        #expect(reread == profile)
        #expect(reread.jsonText == profile.jsonText)
    }

    @Test func unknownKeyNamesItsPathAndTheKnownKeys() {
        let found = problems(#"{"policy": {"stationary": {"fitness": {"windw": 60}}}}"#)
        #expect(found.count == 1)
        #expect(found.first?.keyPath == "policy.stationary.fitness.windw")
        #expect(found.first?.problem == "unknown key (did you mean 'window'?)")
        #expect(found.first?.allowed?.contains("radius, window, movingSpeed") == true)
    }

    @Test func wrongTypeNamesItsPath() {
        let found = problems(#"{"updates": {"pausesAutomatically": "yes", "distanceFilter": "10"}}"#)
        #expect(found.map(\.keyPath) == ["updates.distanceFilter", "updates.pausesAutomatically"])
        #expect(found.first?.problem == "is a string, not a number or null")
        #expect(found.first?.allowed == "null (none) or a number of metres from 1 to 100000")
        #expect(found.last?.allowed == "true, false")
    }

    @Test func outOfRangeNamesItsPathAndTheRange() {
        let found = problems(#"{"policy": {"stationary": {"automotiveNavigation": {"window": 100000}}}}"#)
        #expect(
            found.map(\.description) == [
                "policy.stationary.automotiveNavigation.window: is 100000, out of range (allowed: null (never pause) "
                    + "or a number of seconds from 10 to 86400)"
            ])
        #expect(problems(#"{"stalenessBound": 0}"#).map(\.keyPath) == ["stalenessBound"])
        #expect(
            problems(#"{"policy": {"acquisition": {"wakeMargin": 0}}}"#).map(\.description) == [
                "policy.acquisition.wakeMargin: is 0, out of range (allowed: null (the whole timeout) or a number of "
                    + "seconds from 1 to 3600)"
            ])
        #expect(
            problems(#"{"policy": {"deferredBufferCapacity": 2.5}}"#).first?.problem == "is 2.5, not a whole number")
    }

    @Test func unknownChoiceListsTheChoices() {
        let found = problems(#"{"updates": {"desiredAccuracy": "tenMeters"}}"#)
        #expect(found.first?.keyPath == "updates.desiredAccuracy")
        #expect(
            found.first?.allowed
                == "one of: bestForNavigation, best, nearestTenMeters, hundredMeters, kilometer, threeKilometers, reduced"
        )
    }

    @Test func unknownReceiverModelNamesItsPath() {
        let found = problems(#"{"receiver": {"model": "ublox9"}}"#)
        #expect(found.map(\.keyPath) == ["receiver.model"])
        #expect(found.first?.allowed == "one of: generic-nmea, ublox6, ublox8, mt3339, sirf4")
        #expect(
            problems(#"{"receiver": {"supportedRegimes": ["continuous", "nap"]}}"#).first?.keyPath
                == "receiver.supportedRegimes[1]")
        #expect(
            problems(#"{"receiver": {"supportedRegimes": ["continuous"]}}"#).first?.keyPath
                == "receiver.supportedRegimes")
    }

    @Test func deferralWithADistanceFilterIsImpossible() {
        let found = problems(#"{"updates": {"distanceFilter": 10}, "deferred": {"untilTraveled": 500, "timeout": 60}}"#)
        #expect(found.map(\.keyPath) == ["deferred"])
        #expect(found.first?.problem.contains("updates.distanceFilter 10") == true)
        #expect(found.first?.allowed?.contains("updates.distanceFilter null") == true)
    }

    @Test func deferralNeedsBestAccuracyAndUpdates() {
        let coarse = problems(#"{"updates": {"desiredAccuracy": "hundredMeters"}, "deferred": {"timeout": 60}}"#)
        #expect(coarse.map(\.keyPath) == ["deferred"])
        #expect(coarse.first?.problem.contains("accuracyTooLow") == true)
        let navigation = problems(
            #"{"updates": {"desiredAccuracy": "bestForNavigation", "activityType": "automotiveNavigation"}, "#
                + #""deferred": {"timeout": 60}}"#)
        #expect(navigation.map(\.keyPath) == ["deferred"])
        let noUpdates = problems(#"{"updates": {"enabled": false}, "significantChange": true, "deferred": {}}"#)
        #expect(noUpdates.map(\.keyPath) == ["deferred"])
    }

    @Test func reducedWithADistanceFilterIsFine() {
        #expect(problems(#"{"updates": {"desiredAccuracy": "reduced", "distanceFilter": 500}}"#).isEmpty)
    }

    @Test func aProfileThatRunsNothingIsImpossible() {
        let found = problems(#"{"updates": {"enabled": false}, "significantChange": false}"#)
        #expect(found.map(\.keyPath) == ["updates.enabled"])
    }

    @Test func exitRegimeMustBeOneTheReceiverHas() {
        #expect(
            problems(#"{"exitRegime": "standby", "receiver": {"model": "generic-nmea"}}"#).map(\.keyPath) == [
                "exitRegime"
            ])
        #expect(problems(#"{"exitRegime": "standby", "receiver": {"model": "ublox8"}}"#).isEmpty)
    }

    @Test func thePolicysOwnChecksAreMappedUnderPolicy() {
        let found = problems(
            #"{"policy": {"dutyCycle": {"kilometer": {"minimumInterval": 600, "maximumInterval": 60}}}}"#)
        #expect(found.map(\.keyPath) == ["policy.dutyCycle.kilometer.maximumInterval"])
        #expect(found.first?.problem == "is 60, which does not fit the other values")
        #expect(found.first?.allowed == "a number of seconds ≥ minimumInterval")
    }

    @Test func everyProblemIsReportedNotOnlyTheFirst() {
        let found = problems(
            #"{"bogus": 1, "updates": {"activityType": 3}, "stalenessBound": -1, "policy": {"maximumAge": 0}, "#
                + #""receiver": {"model": "x", "current": {"off": "none"}}}"#)
        #expect(
            found.map(\.keyPath) == [
                "bogus", "updates.activityType", "stalenessBound", "policy.maximumAge", "receiver.model",
                "receiver.current.off",
            ])
    }

    @Test func syntaxErrorsSayWhere() {
        let trailingComma = problems("{\n  \"name\": \"x\",\n}")
        #expect(trailingComma.first?.problem.hasPrefix("line 3, column 1: not valid JSON") == true)
        #expect(trailingComma.first?.problem.contains("no trailing comma") == true)
        let duplicate = problems(#"{"name": "a", "name": "b"}"#)
        #expect(duplicate.first?.problem.contains("appears twice") == true)
        #expect(problems("").first?.problem.contains("empty") == true)
        #expect(problems("[1, 2]").first?.problem == "the document is a list, not an object")
        #expect(problems(#"{"name": "x"} // comment"#).first?.problem.contains("after the end") == true)
        #expect(problems(String(repeating: "[", count: 1000)).first?.problem.contains("nested too deeply") == true)
    }

    @Test func profileNamesMustBeFileNames() {
        #expect(problems(#"{"name": "../etc/passwd"}"#).map(\.keyPath) == ["name"])
        #expect(problems(#"{"name": "my-car_2.v1"}"#).isEmpty)
        // A file's own name is its default name, whatever the file is called.
        #expect((try? Profile.parse("{}", file: "my car.json", defaultName: "my car"))?.name == "my car")
    }
}

/// The lines of the repository's `document` between the lines `begin` and `end`, each with its newline: where
/// docs/profiles.md and docs/config.md hold the tables their schemas generate.
func generatedLines(of document: String, _ begin: String, _ end: String) throws -> String {
    let text = try String(contentsOf: repositoryRoot.appendingPathComponent(document), encoding: .utf8)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let first = try #require(lines.firstIndex(of: begin), "\(document) lacks \(begin)")
    let last = try #require(lines[first...].firstIndex(of: end), "\(document) lacks \(end)")
    return lines[(first + 1)..<last].map { $0 + "\n" }.joined()
}

@Suite struct ProfileSchemaTests {
    /// docs/profiles.md's table of keys is what the schema generates: change a key, then run
    /// scripts/update-profiles-doc.
    @Test func theDocumentedTableIsTheGeneratedOne() throws {
        let documented = try generatedLines(of: "docs/profiles.md", ProfileSchema.markdownBegin, ProfileSchema.markdownEnd)
        #expect(documented == ProfileSchema.markdownTable, "regenerate: scripts/update-profiles-doc")
        let (code, printed, _) = run(["profiles", "schema"])
        #expect(code == 0)
        #expect(printed == ProfileSchema.markdownTable)
    }

    /// Every number the policy, the updates and the receiver model validate is a key of the file, once.
    @Test func everyValidatedNumberIsAKey() {
        let paths = ProfileSchema.keys.map(\.path)
        #expect(Set(paths).count == paths.count)
        let validated =
            UpdatesConfiguration.numbers.map { "updates.\($0.key)" }
            + PolicyConfiguration.numbers.map { "policy.\($0.key)" }
            + ReceiverModel.numbers.map { "receiver.\($0.key)" }
        let numbers = ProfileSchema.keys.compactMap { key -> String? in
            if case .number = key.kind { return key.path }
            return nil
        }
        #expect(Set(validated).subtracting(numbers).isEmpty)
        #expect(numbers.count == validated.count + 3)  // stalenessBound, deferred.untilTraveled, deferred.timeout
    }

    /// The reader's range and `validate()`'s are the same: a value just outside one is rejected by both.
    @Test func theReaderAndValidateShareTheRanges() throws {
        var configuration = PolicyConfiguration()
        configuration.maximumAge = 3601
        #expect(
            configuration.validate().map(\.description) == ["maximumAge: must be a number of seconds from 1 to 3600"])
        #expect(
            problems(#"{"policy": {"maximumAge": 3601}}"#).map(\.description) == [
                "policy.maximumAge: is 3601, out of range (allowed: a number of seconds from 1 to 3600)"
            ])
        var receiver = ReceiverModel.ublox8
        receiver.timeToFirstFix.cold = 1801
        #expect(receiver.validate().map(\.field) == ["timeToFirstFix.cold"])
    }
}

@Suite struct ProfileLookupTests {
    @Test func namesAreLookedUpInTheProfileDirectory() throws {
        let folder = try temporaryFolder("profiles")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write(
            #"{"description": "my van", "updates": {"activityType": "automotiveNavigation"}}"#, to: folder + "/van.json"
        )
        try write(#"{"description": "mine"}"#, to: folder + "/car.json")
        try write(#"{"description": 3}"#, to: folder + "/broken.json")
        let store = ProfileStore(directory: folder)
        let van = try store.load(nameOrPath: "van")
        #expect(van.name == "van")
        #expect(van.description == "my van")
        // A built-in's name is the built-in, whatever the directory holds; the file is used by its path.
        #expect(try store.load(nameOrPath: "car") == ProfileStore.builtIn("car"))
        #expect(try store.load(nameOrPath: folder + "/car.json").description == "mine")
        let listed = store.list()
        #expect(listed.prefix(6).map(\.name) == ProfileStore.builtInNames)
        #expect(listed.dropFirst(6).map(\.name) == ["broken", "car", "van"])
        #expect(listed.first { $0.name == "broken" }?.isValid == false)
        #expect(listed.last { $0.name == "car" }?.isShadowed == true)
    }

    @Test func anUnknownNameIsNotFound() throws {
        let folder = try temporaryFolder("profiles")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(throws: ProfileError.notFound(name: "nope", searched: folder + "/nope.json")) {
            try ProfileStore(directory: folder).load(nameOrPath: "nope")
        }
        #expect(ProfileStore(directory: folder + "/missing").list().count == ProfileStore.builtInNames.count)
    }

    @Test func aPathIsAFile() {
        #expect(ProfileStore.isPath("./car"))
        #expect(ProfileStore.isPath("car.json"))
        #expect(!ProfileStore.isPath("car"))
    }
}

@Suite struct ProfilesCommandTests {
    @Test(arguments: [
        ["profiles", "--help"], ["profiles", "help"], ["profiles", "list", "--help"], ["profiles", "show", "--help"],
        ["profiles", "validate", "-h"], ["profiles", "show", "car", "--help"], ["profiles", "schema", "--help"],
    ])
    func helpOnEveryLevelGoesToStandardOutput(arguments: [String]) {
        let (code, output, error) = run(arguments)
        #expect(code == 0)
        #expect(output.contains("USAGE: lodestar profiles"))
        #expect(error.isEmpty)
    }

    @Test func topLevelUsageMentionsProfiles() {
        #expect(run(["--help"]).1.contains("profiles"))
    }

    @Test(arguments: [
        ["profiles"], ["profiles", "frob"], ["profiles", "show"], ["profiles", "show", "car", "bike"],
        ["profiles", "list", "extra"], ["profiles", "validate"], ["profiles", "validate", "--bogus", "x.json"],
        ["profiles", "schema", "extra"],
    ])
    func usageErrorsExit64(arguments: [String]) {
        let (code, output, error) = run(arguments)
        #expect(code == 64)
        #expect(output.isEmpty)
        #expect(error.contains("USAGE: lodestar profiles"))
    }

    @Test func listShowsEveryBuiltInWithItsDescription() throws {
        let (code, output, _) = run(["profiles", "list"])
        #expect(code == 0)
        for profile in ProfileStore.builtIns {
            #expect(
                output.split(separator: "\n").contains {
                    $0.hasPrefix(profile.name + " ") && $0.hasSuffix(profile.description)
                })
        }
    }

    @Test func anInvalidFileExits78NamingFileAndKeyPath() throws {
        let folder = try temporaryFolder("profiles")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/bad.json"
        try write(
            #"{"policy": {"stationary": {"automotiveNavigation": {"window": "long"}}}, "updates": {"speed": 3}}"#,
            to: path)
        let (code, output, error) = run(["profiles", "validate", path])
        #expect(code == 78)
        #expect(output.isEmpty)
        let lines = error.split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                "\(path): policy.stationary.automotiveNavigation.window: is a string, not a number or null "
                    + "(allowed: null (never pause) or a number of seconds from 10 to 86400)"))
        #expect(lines.contains { $0.hasPrefix("\(path): updates.speed: unknown key") })
        #expect(lines.last == "lodestar profiles validate: \(path) is not a valid profile (2 problems)")
        // `show` of the same file fails the same way.
        #expect(run(["profiles", "show", path]).0 == 78)
    }

    @Test func aMissingFileExits66() {
        let (code, output, error) = run(["profiles", "validate", "/nonexistent/profile.json"])
        #expect(code == 66)
        #expect(output.isEmpty)
        #expect(error.contains("cannot read /nonexistent/profile.json: No such file or directory"))
        #expect(run(["profiles", "show", "no-such-profile"]).0 == 66)
        #expect(run(["profiles", "show", "/nonexistent.json"]).0 == 66)
    }

    @Test func profileInputSaysWhatIsWrongForAnyCommand() {
        let error = MemorySink()
        let context = CommandContext(standardOutput: MemorySink(), standardError: error, shouldStop: { false })
        guard case .failure(let failure) = ProfileInput.load("/nonexistent.json", command: "replay", context: context)
        else {
            Issue.record("loaded a missing file")
            return
        }
        #expect(failure.code == .noInput)
        #expect(error.text.hasPrefix("lodestar replay: cannot read /nonexistent.json"))
        guard case .success(let car) = ProfileInput.load("car", command: "replay", context: context) else {
            Issue.record("car did not load")
            return
        }
        #expect(car.name == "car")
    }
}
