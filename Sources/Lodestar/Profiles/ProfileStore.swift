import SystemInterface
#if canImport(Glibc)
    import Glibc
#endif

/// Where profiles come from: the built-ins, a file path, or a name in the profile directory
/// (`/etc/lodestar/profiles/NAME.json`, or `$LODESTAR_PROFILE_DIR`).
public struct ProfileStore: Sendable {
    public static let defaultDirectory = "/etc/lodestar/profiles"
    /// The largest profile file read: the biggest built-in is a few KiB, so 1 MiB is never a real profile, and
    /// reading no more keeps /dev/zero or a runaway file from taking the memory.
    public static let sizeLimit = 1 << 20
    /// The environment variable that replaces `defaultDirectory` (tests, a user's own set).
    public static let directoryVariable = "LODESTAR_PROFILE_DIR"

    /// The directory named profiles are looked up in.
    public var directory: String
    /// Asked while a profile that is a FIFO or device is waited on; true gives up the read (a command's stop).
    public var shouldStop: @Sendable () -> Bool = { false }

    public init(directory: String) {
        self.directory = directory
    }

    /// This store, its reads giving up when `shouldStop` says so.
    public func stopping(when shouldStop: @escaping @Sendable () -> Bool) -> ProfileStore {
        var store = self
        store.shouldStop = shouldStop
        return store
    }

    /// The store the CLI uses: `$LODESTAR_PROFILE_DIR` if set and not empty, else `/etc/lodestar/profiles`.
    public static var system: ProfileStore {
        if let value = getenv(directoryVariable).map({ String(cString: $0) }), !value.isEmpty {
            return ProfileStore(directory: value)
        }
        return ProfileStore(directory: defaultDirectory)
    }

    /// `car`, `bike`, `walk`, `boat`, `asset`, `always-on`.
    public static var builtInNames: [String] { BuiltInProfiles.texts.map(\.name) }

    /// A built-in profile, nil for an unknown name. Built-ins go through the same parser as files; a test
    /// checks each one parses, so the fallback is never taken.
    public static func builtIn(_ name: String) -> Profile? {
        BuiltInProfiles.profile(named: name)
    }

    /// Every built-in profile.
    public static var builtIns: [Profile] { builtInNames.compactMap(builtIn) }

    /// Whether `text` is a path rather than a name: it contains '/' or ends in `.json`.
    public static func isPath(_ text: String) -> Bool { text.contains("/") || text.hasSuffix(".json") }

    /// Names usable as file names in the profile directory.
    public static func isValidName(_ name: String) -> Bool {
        guard !name.isEmpty, name.count <= 64, !name.hasPrefix(".") else { return false }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "-_.".unicodeScalars.contains($0)
        }
    }

    /// What `--profile X` means: a file path (contains '/' or ends in `.json`), else a built-in name, else
    /// `X.json` in the profile directory. A built-in's name always means the built-in, so a replay with
    /// `--profile car` gives the same output on every machine; a file in the directory under a built-in's
    /// name is used by its path.
    public func load(nameOrPath: String) throws(ProfileError) -> Profile {
        if Self.isPath(nameOrPath) { return try load(file: nameOrPath) }
        if let profile = Self.builtIn(nameOrPath) { return profile }
        guard Self.isValidName(nameOrPath) else {
            throw .notFound(
                name: nameOrPath, searched: "such file in \(directory) (a name is letters, digits, '-', '_', '.')")
        }
        let path = Self.join(directory, nameOrPath + ".json")
        if access(path, F_OK) != 0 && errno == ENOENT { throw .notFound(name: nameOrPath, searched: path) }
        return try Profile.parse(try read(path), file: path, defaultName: nameOrPath)
    }

    /// `load(nameOrPath:)` with the system store.
    public static func load(nameOrPath: String) throws(ProfileError) -> Profile {
        try system.load(nameOrPath: nameOrPath)
    }

    /// A profile file; its name defaults to the file's name without `.json`.
    public func load(file path: String) throws(ProfileError) -> Profile {
        try Profile.parse(try read(path), file: path, defaultName: Self.stem(of: path))
    }

    /// A profile file's bytes, at most `sizeLimit`: a larger file is an invalid profile (78), one that
    /// cannot be read (a directory, a stop while a FIFO waits) an unreadable one (66, or 130/143 for a stop).
    private func read(_ path: String) throws(ProfileError) -> [UInt8] {
        do throws(SystemError) {
            return try readWholeFile(path, limit: Self.sizeLimit, what: "a profile", shouldStop: shouldStop)
        } catch {
            if error.isTooLarge { throw .invalid(file: path, problems: [ProfileProblem(keyPath: "", problem: error.reason)]) }
            throw .unreadable(file: path, reason: error.reason)
        }
    }

    /// One profile the store knows of, for `lodestar profiles list`.
    public struct Listing: Sendable, Equatable {
        public var name: String
        /// nil for a built-in.
        public var path: String?
        /// The profile's description, or why it cannot be loaded.
        public var description: String
        public var isValid: Bool
        /// A directory file named like a built-in: only usable by its path.
        public var isShadowed: Bool
    }

    /// The built-ins, then the directory's `*.json` files in name order. A missing directory lists none.
    public func list() -> [Listing] {
        var listings = Self.builtIns.map {
            Listing(name: $0.name, path: nil, description: $0.description, isValid: true, isShadowed: false)
        }
        for file in Self.jsonFiles(in: directory) {
            let path = Self.join(directory, file)
            let name = Self.stem(of: file)
            let shadowed = Self.builtInNames.contains(name)
            do throws(ProfileError) {
                let profile = try load(file: path)
                listings.append(
                    Listing(
                        name: name, path: path, description: profile.description, isValid: true, isShadowed: shadowed))
            } catch {
                let count = error.problems.count
                let why =
                    count > 0
                    ? "invalid: \(count) problem\(count == 1 ? "" : "s")" : (error.lines.first ?? "unreadable")
                listings.append(Listing(name: name, path: path, description: why, isValid: false, isShadowed: shadowed))
            }
        }
        return listings
    }

    private static func jsonFiles(in directory: String) -> [String] {
        directoryEntries(directory).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted()
    }

    private static func join(_ directory: String, _ file: String) -> String {
        directory.hasSuffix("/") ? directory + file : directory + "/" + file
    }

    static func stem(of path: String) -> String {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        return file.hasSuffix(".json") ? String(file.dropLast(5)) : file
    }
}
