import Lodestar

#if canImport(Glibc)
    import Glibc
#endif

/// `lodestar profiles list|show|validate|schema`: the profiles `--profile` can name, checking a profile file,
/// and the table of every key.
enum ProfilesCommand {
    static let declaration = CommandDeclaration(
        path: ["profiles"],
        abstract: "list, show, validate power-policy profiles and print their schema",
        discussion: """
            A profile names every knob of the power policy and of the receiver model (docs/profiles.md).
            '--profile P' takes a built-in name (car, bike, walk, boat, asset, always-on), a file path (one that
            contains '/' or ends in .json), or a name of a file P.json in /etc/lodestar/profiles (or in
            $LODESTAR_PROFILE_DIR when set).
            """,
        subcommands: [listDeclaration, showDeclaration, validateDeclaration, schemaDeclaration],
        exitStatuses: ExitStatusDeclaration.union(
            [showDeclaration, validateDeclaration, listDeclaration, schemaDeclaration].map(\.exitStatuses)))

    static let listDeclaration = CommandDeclaration(
        path: ["profiles", "list"],
        abstract: "the built-in profiles and those in the profile directory, one line each",
        discussion: """
            Prints each profile's name and description: the built-ins, then the *.json files in
            /etc/lodestar/profiles (or $LODESTAR_PROFILE_DIR). A file named like a built-in is shown but is only
            used by its path: '--profile car' is always the built-in.
            """,
        exitStatuses: [
            ExitStatusDeclaration(.success, "ok"),
            .usageError,
            .outputNotWritten,
        ],
        body: list(_:context:))

    static let showDeclaration = CommandDeclaration(
        path: ["profiles", "show"],
        abstract: "print a complete profile file: every key, defaults written out, ready to edit",
        discussion: """
            Prints the profile <name> (a built-in, a name in the profile directory, or a file path) as a complete
            JSON profile file: every key with its value, defaults written out, in a fixed order. Save it, edit it,
            check it with 'lodestar profiles validate', use it with '--profile <file>':

              lodestar profiles show car > my-car.json
            """,
        arguments: [
            ArgumentDeclaration(name: "name", help: "a built-in profile, a name in the profile directory, or a file")
        ],
        exitStatuses: .readingAFile(
            success: "ok", noInput: "no such profile or file", notValid: .profileNotValid),
        body: show(_:context:))

    static let validateDeclaration = CommandDeclaration(
        path: ["profiles", "validate"],
        abstract: "check a profile file and say everything wrong with it",
        discussion: """
            Checks a profile file completely: unknown keys, values of the wrong type, values out of range and
            settings that cannot work together (deferral with a distance filter, say). Prints '<file>: valid',
            or every problem on standard error as '<file>: key.path: what is wrong (allowed: ...)'. A name
            without '/' that is not a file here is looked up as '--profile' would.
            """,
        arguments: [ArgumentDeclaration(name: "file", help: "the profile file to check")],
        exitStatuses: .readingAFile(
            success: "valid", noInput: "the file cannot be read", notValid: .profileNotValid),
        body: validate(_:context:))

    static let schemaDeclaration = CommandDeclaration.schema(
        group: "profiles",
        abstract: "print the table of every key (type, unit, range, default) as Markdown",
        discussion: """
            Prints the table of every key a profile file may hold, as Markdown: its key path, type, unit, the
            values allowed, the default, what null means and what it does. docs/profiles.md holds this table
            between its 'generated' markers (scripts/update-profiles-doc puts it there).
            """,
        markdown: { ProfileSchema.markdownTable })

    static func list(_ parsed: ParsedArguments, context: CommandContext) -> ExitCode {
        let listings = ProfileStore.system.list()
        let width = listings.map(\.name.count).max() ?? 0
        for listing in listings {
            var line =
                listing.name + String(repeating: " ", count: width - listing.name.count + 2) + listing.description
            if let path = listing.path {
                line += listing.isShadowed ? "  (\(path); named like a built-in: use its path)" : "  (\(path))"
            }
            guard write(line + "\n", context: context) else { return .ioError }
        }
        return .success
    }

    static func show(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let name = try parsed.operand("name")
        switch ProfileInput.load(name, command: "profiles show", context: context) {
        case .success(let profile):
            return write(profile.jsonText, context: context) ? .success : .ioError
        case .failure(let failure):
            return failure.code
        }
    }

    static func validate(_ parsed: ParsedArguments, context: CommandContext) throws(UsageError) -> ExitCode {
        let file = try parsed.operand("file")
        // A bare name that is a file here is that file ('validate car.json' and 'validate mine' alike).
        let isFile = access(file, F_OK) == 0
        let result: Result<Profile, ProfileError>
        do throws(ProfileError) {
            result = .success(
                isFile || ProfileStore.isPath(file)
                    ? try ProfileStore.system.stopping(when: context.shouldStop).load(file: file)
                    : try ProfileStore.system.stopping(when: context.shouldStop).load(nameOrPath: file))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success:
            return write("\(file): valid\n", context: context) ? .success : .ioError
        case .failure(let error):
            return ProfileInput.report(error, command: "profiles validate", context: context)
        }
    }

    private static func write(_ text: String, context: CommandContext) -> Bool {
        context.writeOutput(text, name: "lodestar profiles")
    }
}

/// `--profile P` for any command: loads through `ProfileStore.system` and says what is wrong in the shared
/// format (`lodestar COMMAND: FILE: key.path: what is wrong (allowed: …)`), 66 for a missing profile or
/// file, 78 for an invalid one.
enum ProfileInput {
    struct Failure: Error {
        var code: ExitCode
    }

    static func load(_ nameOrPath: String, command: String, context: CommandContext) -> Result<Profile, Failure> {
        do throws(ProfileError) {
            return .success(try ProfileStore.system.stopping(when: context.shouldStop).load(nameOrPath: nameOrPath))
        } catch {
            return .failure(Failure(code: report(error, command: command, context: context)))
        }
    }

    /// Says every line of `error` on standard error; the exit status it calls for.
    @discardableResult
    static func report(_ error: ProfileError, command: String, context: CommandContext) -> ExitCode {
        if case .unreadable(let file, _) = error, let code = context.stoppedReading(file, command: command) {
            return code
        }
        switch error {
        case .notFound, .unreadable:
            context.say("lodestar \(command): \(error.lines.joined(separator: "; "))")
            return .noInput
        case .invalid(let file, let problems):
            for problem in problems { context.say("\(file): \(problem)") }
            let count = problems.count
            context.say(
                "lodestar \(command): \(file) is not a valid profile (\(count) problem\(count == 1 ? "" : "s"))")
            return .config
        }
    }
}
