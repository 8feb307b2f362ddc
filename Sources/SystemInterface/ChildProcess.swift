import CSpawn

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, its output sent to files or read through a pipe
/// (`pipingOutput`). The runtime's only way to run another program (gpsd for the demo and the tests,
/// gpsdecode for `import`).
public final class ChildProcess: @unchecked Sendable {
    public let executable: String
    public let arguments: [String]
    public let processID: pid_t
    private var exitStatus: Int32?

    /// Starts `executable` with `arguments`. `environment` adds to (and overrides) this process's own.
    public convenience init(
        executable: String, arguments: [String], environment: [String: String] = [:],
        standardInput: String? = nil, standardOutput: String? = nil, standardError: String? = nil
    ) throws(SystemError) {
        try self.init(
            executable: executable, arguments: arguments, environment: environment, standardInput: standardInput,
            output: .file(standardOutput), standardError: standardError)
    }

    /// Starts `executable` with its standard output a pipe, read as it writes (a `ReadableFile` on the pipe),
    /// so its output is never held whole, in memory or on disk.
    public static func pipingOutput(
        executable: String, arguments: [String], standardInput: String? = nil, standardError: String? = nil
    ) throws(SystemError) -> (process: ChildProcess, output: ReadableFile) {
        var descriptors: [Int32] = [-1, -1]
        // glibc's pipe2 is not visible to Swift: close-on-exec is set right after.
        guard pipe(&descriptors) == 0 else { throw SystemError("pipe", executable) }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let process: ChildProcess
        do throws(SystemError) {
            process = try ChildProcess(
                executable: executable, arguments: arguments, environment: [:], standardInput: standardInput,
                output: .descriptor(descriptors[1]), standardError: standardError)
        } catch {
            Glibc.close(descriptors[0])
            Glibc.close(descriptors[1])
            throw error
        }
        // The child holds its own copy: the end of its output is the end of the pipe.
        Glibc.close(descriptors[1])
        return (process, ReadableFile(descriptor: descriptors[0], name: executable))
    }

    private enum Output {
        case file(String?)
        case descriptor(Int32)
    }

    private init(
        executable: String, arguments: [String], environment: [String: String],
        standardInput: String?, output: Output, standardError: String?
    ) throws(SystemError) {
        self.executable = executable
        self.arguments = arguments

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput ?? "/dev/null", O_RDONLY, 0)
        let outputFlags = O_WRONLY | O_CREAT | O_TRUNC
        switch output {
        case .file(let standardOutput):
            posix_spawn_file_actions_addopen(&actions, 1, standardOutput ?? "/dev/null", outputFlags, 0o644)
        case .descriptor(let descriptor):
            posix_spawn_file_actions_adddup2(&actions, descriptor, 1)
        }
        posix_spawn_file_actions_addopen(&actions, 2, standardError ?? "/dev/null", outputFlags, 0o644)
        // Nothing else of ours reaches the child. A descriptor another thread opened without close-on-exec
        // (libgps's sockets are) would otherwise live on in it: a gpsd control-socket connection held open so
        // by another child left gpsd blocked reading it, deaf to every client, until that child ended.
        lodestar_spawn_close_from(&actions, 3)

        var merged: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                merged[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            cursor += 1
        }
        for (key, value) in environment { merged[key] = value }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        // A child inherits the spawning thread's signal mask and ignored signals (a test runner's thread,
        // or the CLI's ignored SIGPIPE): give it the defaults so SIGTERM and SIGPIPE act on it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, signalNumber) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else { throw SystemError("posix_spawn", executable, code: status) }
        processID = pid
    }

    deinit {
        if exitStatus == nil {
            kill(processID, SIGKILL)
            _ = waitForExit(timeout: 2)
        }
    }

    public func signal(_ signal: Int32) {
        guard exitStatus == nil else { return }
        kill(processID, signal)
    }

    /// Reaps the child if it has exited; its raw wait status.
    public func poll() -> Int32? {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        if waitpid(processID, &status, WNOHANG) == processID {
            exitStatus = status
        }
        return exitStatus
    }

    public var isRunning: Bool { poll() == nil }

    /// Waits up to `timeout` seconds; the raw wait status, or nil if it is still running.
    @discardableResult
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = monotonicSeconds() + timeout
        while true {
            if let status = poll() { return status }
            if monotonicSeconds() >= deadline { return nil }
            sleepSeconds(0.01)
        }
    }

    /// SIGTERM, then SIGKILL if it has not gone within `grace` seconds.
    public func terminate(grace: Double = 3) {
        signal(SIGTERM)
        if waitForExit(timeout: grace) == nil {
            signal(SIGKILL)
            waitForExit(timeout: grace)
        }
    }
}
