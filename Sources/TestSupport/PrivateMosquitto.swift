import ReceiverEmulation
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// A mosquitto broker of our own on free loopback ports, with a password file, an ACL and, when asked, a TLS
/// listener with a certificate authority made for it: what the OwnTracks upload tests publish to. Its folder
/// (configuration, passwords, certificates, persistence, log) stays across `kill` and `restart`, so a restarted
/// broker is the same broker on the same ports with the sessions it had saved.
public final class PrivateMosquitto: @unchecked Sendable {
    public struct Credentials: Sendable, Equatable {
        public var username: String
        public var password: String
    }

    public struct Options: Sendable {
        /// A port for the plain listener instead of a free one.
        public var port: UInt16?
        /// Also listen with TLS (a fresh CA and a server certificate for 127.0.0.1 and localhost).
        public var tls = false
        /// The OwnTracks user whose topics the publisher may write: `owntracks/<owntracksUser>/#` only.
        public var owntracksUser = "pi"
        public var publisher = Credentials(username: "lodestar", password: "publisher-secret")
        /// May read `owntracks/#`, write nothing.
        public var reader = Credentials(username: "reader", password: "reader-secret")
        /// mosquitto's debug log too (every packet, and `Denied PUBLISH` for what the ACL drops): large.
        public var debugLog = false

        public init() {}
    }

    public enum StartError: Error, CustomStringConvertible {
        case notInstalled(String)
        case system(SystemError)
        case setUpFailed(step: String, log: String)
        case didNotStart(reason: String, log: String)

        public var description: String {
            switch self {
            case .notInstalled(let program):
                return "\(program) is not installed (Debian: sudo apt-get install mosquitto mosquitto-clients openssl)"
            case .system(let error):
                return error.description
            case .setUpFailed(let step, let log):
                return "private mosquitto: \(step) failed\n\(log)"
            case .didNotStart(let reason, let log):
                return "private mosquitto did not start: \(reason)\n\(log)"
            }
        }
    }

    public let options: Options
    /// The plain MQTT listener on 127.0.0.1.
    public let port: UInt16
    /// The TLS listener on 127.0.0.1, when `options.tls`.
    public let tlsPort: UInt16?
    /// The CA that signed the TLS listener's certificate, when `options.tls`.
    public let caFile: String?
    /// A second CA that signed nothing the broker uses: a client trusting it must refuse the broker.
    public let unrelatedCAFile: String?
    public let folder: String
    public let logPath: String
    private let configPath: String
    private let executable: String
    private var process: ChildProcess?

    public var publisher: Credentials { options.publisher }
    public var reader: Credentials { options.reader }

    public init(options: Options = Options()) throws(StartError) {
        guard let mosquitto = findExecutable("mosquitto") else { throw .notInstalled("mosquitto") }
        guard let passwordTool = findExecutable("mosquitto_passwd") else { throw .notInstalled("mosquitto_passwd") }
        self.options = options
        executable = mosquitto
        guard let directory = TemporaryDirectory(prefix: "lodestar-mosquitto") else {
            throw .system(SystemError("mkdtemp", "/tmp/lodestar-mosquitto-XXXXXX"))
        }
        folder = directory.path
        logPath = folder + "/mosquitto.log"
        configPath = folder + "/mosquitto.conf"
        do throws(StartError) {
            do throws(SystemError) {
                if let fixed = options.port { port = fixed } else { port = try freeLoopbackPort() }
                if options.tls { tlsPort = try freeLoopbackPort() } else { tlsPort = nil }
            } catch {
                throw .system(error)
            }
            if options.tls {
                let openssl = findExecutable("openssl")
                guard let openssl else { throw .notInstalled("openssl") }
                try Self.makeCertificates(openssl: openssl, in: folder)
                caFile = folder + "/ca.crt"
                unrelatedCAFile = folder + "/unrelated-ca.crt"
            } else {
                caFile = nil
                unrelatedCAFile = nil
            }
            let passwords = folder + "/passwords"
            try Self.run(passwordTool, ["-b", "-c", passwords, options.publisher.username, options.publisher.password],
                         in: folder, step: "mosquitto_passwd")
            try Self.run(passwordTool, ["-b", passwords, options.reader.username, options.reader.password],
                         in: folder, step: "mosquitto_passwd")
            try write(Self.acl(options), to: folder + "/acl")
            try write(configuration(), to: configPath)
            try start()
        } catch {
            TemporaryDirectory.removeTree(folder)
            throw error
        }
    }

    deinit {
        stop()
        TemporaryDirectory.removeTree(folder)
    }

    /// The publisher may write its OwnTracks user's topics; the reader may read every OwnTracks topic.
    static func acl(_ options: Options) -> String {
        """
        user \(options.publisher.username)
        topic write owntracks/\(options.owntracksUser)/#

        user \(options.reader.username)
        topic read owntracks/#

        """
    }

    private func configuration() -> String {
        var lines = [
            "per_listener_settings false",
            "allow_anonymous false",
            "password_file \(folder)/passwords",
            "acl_file \(folder)/acl",
            // Sessions saved each second, so a persistent subscriber's session outlives a SIGKILL and restart.
            "persistence true",
            "persistence_location \(folder)/",
            "autosave_interval 1",
            // No in-flight window or queue limit towards subscribers: what the broker acknowledged goes out to
            // the subscriber's socket at once instead of waiting in the broker's memory.
            "max_inflight_messages 0",
            "max_queued_messages 0",
            "log_dest file \(logPath)",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "log_type subscribe",
            "connection_messages true",
        ] + (options.debugLog ? ["log_type debug"] : []) + [
            "listener \(port) 127.0.0.1",
        ]
        // As root mosquitto would switch to the `mosquitto` user, which cannot read this folder.
        if geteuid() == 0 { lines.insert("user root", at: 0) }
        if let tlsPort {
            lines += [
                "listener \(tlsPort) 127.0.0.1",
                "cafile \(folder)/ca.crt",
                "certfile \(folder)/server.crt",
                "keyfile \(folder)/server.key",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Starts mosquitto on this broker's ports and waits until each accepts connections.
    private func start(timeout: Double = 10) throws(StartError) {
        let started: ChildProcess
        do {
            started = try ChildProcess(
                executable: executable, arguments: ["-c", configPath], standardOutput: folder + "/stdout.log",
                standardError: folder + "/stderr.log")
        } catch {
            throw .system(error)
        }
        process = started
        let deadline = monotonicSeconds() + timeout
        while !canConnect(port: port) || !(tlsPort.map(canConnect(port:)) ?? true) {
            if !started.isRunning {
                throw .didNotStart(reason: "mosquitto exited", log: log)
            }
            if monotonicSeconds() > deadline {
                started.terminate(grace: 1)
                throw .didNotStart(reason: "port \(port) not accepting after \(timeout) s", log: log)
            }
            sleepSeconds(0.02)
        }
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    /// mosquitto's log (all starts of this broker), then its standard error.
    public var log: String {
        let text = { (path: String) in readFile(path).map { String(decoding: $0, as: UTF8.self) } ?? "" }
        return text(logPath) + text(folder + "/stderr.log")
    }

    /// Stops the broker with SIGTERM (it saves its sessions and says goodbye to nobody: clients see the
    /// connection close). Safe to call twice.
    public func stop() {
        process?.signal(SIGCONT)
        process?.terminate(grace: 2)
    }

    /// Kills the broker with SIGKILL, as a crash would: nothing saved since the last autosave, no goodbyes.
    public func kill() {
        process?.signal(SIGKILL)
        process?.waitForExit(timeout: 5)
    }

    /// Freezes the broker (SIGSTOP): the kernel still accepts connections for it, nothing answers them, as
    /// with a broker behind a dead link.
    public func pause() {
        process?.signal(SIGSTOP)
    }

    /// Lets a paused broker run again (SIGCONT).
    public func resume() {
        process?.signal(SIGCONT)
    }

    /// Starts the broker again on the same ports with the same folder (stopping it first if it runs). A port
    /// the kernel holds a moment longer is tried again until `timeout`.
    public func restart(timeout: Double = 10) throws(StartError) {
        stop()
        let deadline = monotonicSeconds() + timeout
        while true {
            do throws(StartError) {
                try start(timeout: max(1, deadline - monotonicSeconds()))
                return
            } catch {
                guard case .didNotStart = error, monotonicSeconds() < deadline else { throw error }
                sleepSeconds(0.1)
            }
        }
    }

    /// How many times the broker logged `clientID` subscribing to `topic` (once per connection of a subscriber
    /// that subscribes on connect): a subscriber is listening once this grows.
    public func subscriptionCount(clientID: String, topic: String) -> Int {
        let needle = " \(clientID) 1 \(topic)"
        return log.split(separator: "\n").filter { $0.hasSuffix(needle) }.count
    }

    /// How many connections from `clientID` the broker logged.
    public func connectionCount(clientID: String) -> Int {
        log.split(separator: "\n").filter { $0.contains("New client connected") && $0.contains(" as \(clientID) ") }
            .count
    }

    // MARK: Set-up

    private func write(_ text: String, to path: String) throws(StartError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .system(SystemError("open", path)) }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { raw in Glibc.write(descriptor, raw.baseAddress, raw.count) }
        guard written == bytes.count else { throw .system(SystemError("write", path)) }
    }

    /// Runs a set-up tool to completion; its output goes to a log in the folder, shown when it fails.
    private static func run(_ executable: String, _ arguments: [String], in folder: String, step: String)
        throws(StartError)
    {
        let output = folder + "/setup.log"
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: executable, arguments: arguments, standardOutput: output, standardError: output)
        } catch {
            throw .system(error)
        }
        guard let status = child.waitForExit(timeout: 30) else {
            child.terminate(grace: 1)
            throw .setUpFailed(step: step + " (no end after 30 s)", log: "")
        }
        guard status == 0 else {
            let log = readFile(output).map { String(decoding: $0, as: UTF8.self) } ?? ""
            throw .setUpFailed(step: "\(step) \(arguments.joined(separator: " ")) (wait status \(status))", log: log)
        }
    }

    /// A CA, a server certificate it signs for 127.0.0.1 and localhost, and an unrelated CA, with `openssl`.
    /// P-256 keys: quick to make.
    private static func makeCertificates(openssl: String, in folder: String) throws(StartError) {
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for (name, subject) in [("ca", "/CN=Lodestar test CA"), ("unrelated-ca", "/CN=Lodestar unrelated CA")] {
            try run(
                openssl,
                ["req", "-x509"] + key + [
                    "-keyout", "\(folder)/\(name).key", "-out", "\(folder)/\(name).crt", "-days", "2",
                    "-subj", subject,
                ], in: folder, step: "openssl req (\(name))")
        }
        try run(
            openssl,
            ["req"] + key + [
                "-keyout", "\(folder)/server.key", "-out", "\(folder)/server.csr", "-subj", "/CN=localhost",
            ], in: folder, step: "openssl req (server)")
        let extensions = folder + "/server.ext"
        let extensionText = """
            basicConstraints=CA:FALSE
            keyUsage=critical,digitalSignature,keyAgreement
            extendedKeyUsage=serverAuth
            subjectAltName=IP:127.0.0.1,DNS:localhost

            """
        let descriptor = open(extensions, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .system(SystemError("open", extensions)) }
        let bytes = Array(extensionText.utf8)
        let written = bytes.withUnsafeBytes { raw in Glibc.write(descriptor, raw.baseAddress, raw.count) }
        close(descriptor)
        guard written == bytes.count else { throw .system(SystemError("write", extensions)) }
        try run(
            openssl,
            [
                "x509", "-req", "-in", "\(folder)/server.csr", "-CA", "\(folder)/ca.crt", "-CAkey", "\(folder)/ca.key",
                "-CAcreateserial", "-out", "\(folder)/server.crt", "-days", "2", "-extfile", extensions,
            ], in: folder, step: "openssl x509 (server)")
    }
}

/// `mosquitto_sub -v -q 1 -t TOPIC` as the broker's reader, with a fixed client id and a persistent session
/// (`-c`), its output in a file: an MQTT client independent of libmosquitto's use in Lodestar, which sees what
/// the broker delivered. A persistent session means what is published while it reconnects (after the broker
/// restarts) is kept for it.
public final class MosquittoSubscriber: @unchecked Sendable {
    public struct Message: Sendable, Equatable {
        public var topic: String
        public var payload: String
    }

    public let clientID: String
    public let topic: String
    public let outputPath: String
    private let broker: PrivateMosquitto
    private let process: ChildProcess

    /// Starts the subscriber and waits (up to `timeout`) until the broker logged its subscription.
    public init(
        broker: PrivateMosquitto, topic: String = "owntracks/#", clientID: String = "lodestar-test-reader",
        timeout: Double = 10
    ) throws {
        guard let subscriber = findExecutable("mosquitto_sub") else {
            throw PrivateMosquitto.StartError.notInstalled("mosquitto_sub")
        }
        self.broker = broker
        self.clientID = clientID
        self.topic = topic
        outputPath = broker.folder + "/subscriber-\(clientID).out"
        let before = broker.subscriptionCount(clientID: clientID, topic: topic)
        process = try ChildProcess(
            executable: subscriber,
            arguments: [
                "-h", "127.0.0.1", "-p", String(broker.port), "-u", broker.reader.username, "-P",
                broker.reader.password, "-i", clientID, "-c", "-q", "1", "-v", "-t", topic,
            ],
            standardOutput: outputPath, standardError: broker.folder + "/subscriber-\(clientID).err")
        try waitUntilSubscribed(times: before + 1, timeout: timeout)
    }

    deinit { stop() }

    /// Waits until the broker has logged this subscriber's subscription `times` times in all (each start or
    /// restart of the broker it reconnects to adds one).
    public func waitUntilSubscribed(times: Int, timeout: Double = 15) throws {
        try waitUntil("\(clientID) subscribed \(times) times to \(topic)", timeout: timeout) {
            broker.subscriptionCount(clientID: clientID, topic: topic) >= times || !process.isRunning
        }
        guard process.isRunning else {
            throw TimedOut(what: "mosquitto_sub (it exited): \(errorOutput)")
        }
    }

    /// Every complete line received so far, split into topic and payload at the first space (`-v`).
    public var messages: [Message] {
        guard let bytes = readFile(outputPath), let lastNewline = bytes.lastIndex(of: 0x0A) else { return [] }
        return bytes[...lastNewline].split(separator: 0x0A, omittingEmptySubsequences: true).map { line in
            let text = String(decoding: line, as: UTF8.self)
            guard let space = text.firstIndex(of: " ") else { return Message(topic: text, payload: "") }
            return Message(topic: String(text[..<space]), payload: String(text[text.index(after: space)...]))
        }
    }

    /// Waits until `condition` holds for the messages received; those messages.
    @discardableResult
    public func waitForMessages(
        _ what: String, timeout: Double = 20, _ condition: ([Message]) -> Bool
    ) throws -> [Message] {
        var latest: [Message] = []
        try waitUntil(what, timeout: timeout) {
            latest = messages
            return condition(latest)
        }
        return latest
    }

    public var isRunning: Bool { process.isRunning }

    public var errorOutput: String {
        readFile(broker.folder + "/subscriber-\(clientID).err").map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    public func stop() {
        process.terminate(grace: 1)
    }
}
