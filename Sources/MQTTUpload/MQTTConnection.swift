import CMosquitto
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// Why an MQTT connection could not be set up or went wrong, in words for the log.
public struct MQTTError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// libmosquitto, which lodestar opens on first use instead of linking it (CMosquitto's shim.h says why).
enum MosquittoLibrary {
    /// nil once libmosquitto is loaded and set up for the process (`mosquitto_lib_init`), done once however many
    /// threads ask first: a Swift static is initialised exactly once. Otherwise why libmosquitto cannot be used.
    static let failure: MQTTError? = {
        if let failure = load(CMOSQUITTO_SONAME) { return failure }
        guard cmosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue else {
            return MQTTError("libmosquitto could not be initialised")
        }
        return nil
    }()

    /// Opens libmosquitto from `soname` (Debian's libmosquitto1 ships libmosquitto.so.1) for the cmosquitto_
    /// functions; nil, or why not in words that say what to install.
    static func load(_ soname: String) -> MQTTError? {
        let failure = LibraryOnFirstUse.failure(
            package: "libmosquitto1", purpose: "upload to OwnTracks", loaded: CMOSQUITTO_LOADED,
            noFunction: CMOSQUITTO_NO_FUNCTION
        ) { cmosquitto_load_soname(soname, &$0, $0.count) }
        return failure.map(MQTTError.init)
    }

    /// libmosquitto's words for one of its error codes.
    static func text(_ code: Int32) -> String {
        // Only ever asked once a connection exists, so libmosquitto is loaded; the check keeps it from loading here.
        guard failure == nil else { return "mosquitto error \(code)" }
        return cmosquitto_strerror(code).map { String(cString: $0) } ?? "mosquitto error \(code)"
    }
}

/// What libmosquitto's callbacks report, gathered for the thread that runs the loop. The callbacks run inside
/// `mosquitto_loop` on that thread, so nothing here is shared between threads.
final class MQTTConnectionEvents {
    /// The CONNACK return code, once it came.
    var connackCode: Int32?
    /// Message ids whose PUBACK came.
    var acknowledged: Set<Int32> = []
    /// The reason code of a disconnection and the errno at that moment (libmosquitto reports a socket error as
    /// MOSQ_ERR_ERRNO and leaves the cause in errno).
    var disconnection: (code: Int32, errno: Int32)?
    /// The newest error or warning libmosquitto logged (OpenSSL's reason for a failed handshake is only there).
    var lastLoggedError: String?
}

/// One MQTT client connection through libmosquitto, driven by `loop` on the caller's thread (never libmosquitto's
/// own thread), so its owner decides how long anything may take. MQTT 3.1.1.
final class MQTTConnection {
    private let handle: OpaquePointer
    let events = MQTTConnectionEvents()
    let endpoint: String

    struct TLSOptions {
        var caFile: String?
        var caPath: String?
        /// Skip the check that the certificate names the host.
        var insecure: Bool
    }

    /// A client with `clientID` and a clean session, not yet connected.
    init(clientID: String, endpoint: String) throws(MQTTError) {
        if let failure = MosquittoLibrary.failure { throw failure }
        self.endpoint = endpoint
        let context = Unmanaged.passUnretained(events).toOpaque()
        guard let made = cmosquitto_new(clientID, true, context) else {
            throw MQTTError("cannot make an MQTT client for \(endpoint): \(errnoText(errno))")
        }
        handle = made
        cmosquitto_connect_callback_set(handle) { _, context, code in
            guard let context else { return }
            Unmanaged<MQTTConnectionEvents>.fromOpaque(context).takeUnretainedValue().connackCode = code
        }
        cmosquitto_publish_callback_set(handle) { _, context, messageID in
            guard let context else { return }
            Unmanaged<MQTTConnectionEvents>.fromOpaque(context).takeUnretainedValue().acknowledged.insert(messageID)
        }
        cmosquitto_disconnect_callback_set(handle) { _, context, code in
            // errno first: anything after may change it.
            let cause = errno
            guard let context else { return }
            let events = Unmanaged<MQTTConnectionEvents>.fromOpaque(context).takeUnretainedValue()
            if events.disconnection == nil { events.disconnection = (code, cause) }
        }
        cmosquitto_log_callback_set(handle) { _, context, level, text in
            guard let context, let text, level & Int32(MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0 else { return }
            Unmanaged<MQTTConnectionEvents>.fromOpaque(context).takeUnretainedValue().lastLoggedError =
                String(cString: text)
        }
        _ = cmosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
    }

    deinit {
        // `events` outlives the handle: it is a stored property released after this body.
        cmosquitto_destroy(handle)
    }

    func setCredentials(username: String, password: String?) throws(MQTTError) {
        try check(cmosquitto_username_pw_set(handle, username, password), "set the user name")
    }

    /// What the broker publishes for this client when its connection ends without a DISCONNECT.
    func setWill(topic: String, payload: String, qos: Int32, retain: Bool) throws(MQTTError) {
        let bytes = Array(payload.utf8)
        let code = bytes.withUnsafeBytes { raw in
            cmosquitto_will_set(handle, topic, Int32(raw.count), raw.baseAddress, qos, retain)
        }
        try check(code, "set the last will")
    }

    /// TLS with the given trust anchors, or the system's certificates when neither file nor folder is given.
    func setTLS(_ options: TLSOptions) throws(MQTTError) {
        if options.caFile == nil, options.caPath == nil {
            try check(cmosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "use the system's CA certificates")
        } else {
            try check(
                cmosquitto_tls_set(handle, options.caFile, options.caPath, nil, nil, nil),
                "use CA file \(options.caFile ?? "-") / folder \(options.caPath ?? "-")")
        }
        try check(cmosquitto_tls_insecure_set(handle, options.insecure), "set the host name check")
    }

    /// Starts connecting: the name lookup happens here (it blocks), the TCP and TLS handshakes and the CONNECT
    /// in `loop`.
    func startConnecting(host: String, port: Int, keepAlive: Int) throws(MQTTError) {
        let code = cmosquitto_connect_async(handle, host, Int32(clamping: port), Int32(clamping: keepAlive))
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(
                Self.connectFailure(code: code, errno: errno, endpoint: endpoint, logged: events.lastLoggedError))
        }
    }

    /// Queues a PUBLISH; its message id, which the PUBACK names.
    func publish(topic: String, payload: String, qos: Int32, retain: Bool) throws(MQTTError) -> Int32 {
        var messageID: Int32 = 0
        let bytes = Array(payload.utf8)
        let code = bytes.withUnsafeBytes { raw in
            cmosquitto_publish(handle, &messageID, topic, Int32(raw.count), raw.baseAddress, qos, retain)
        }
        try check(code, "publish to \(topic)")
        return messageID
    }

    /// Runs libmosquitto's network loop once, waiting at most `milliseconds` for the socket; libmosquitto's
    /// result code (MOSQ_ERR_SUCCESS while the connection lives).
    func loop(milliseconds: Int32) -> Int32 {
        cmosquitto_loop(handle, milliseconds, 1)
    }

    /// Queues a DISCONNECT: a clean end, after which the broker does not publish the will.
    func disconnect() {
        _ = cmosquitto_disconnect(handle)
    }

    /// Closes the socket without a DISCONNECT, as a lost radio link would end it: the broker then publishes
    /// the will. For tests.
    func dropWithoutDisconnect() {
        let socket = cmosquitto_socket(handle)
        if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private func check(_ code: Int32, _ what: String) throws(MQTTError) {
        guard code != MOSQ_ERR_SUCCESS.rawValue else { return }
        let cause = code == MOSQ_ERR_ERRNO.rawValue ? errnoText(errno) : MosquittoLibrary.text(code)
        throw MQTTError("cannot \(what) for \(endpoint): \(cause)")
    }

    /// Words for a failed connection start (`mosquitto_connect_async`, which on a fast link already runs the
    /// TLS handshake) or a connection lost before CONNACK. `logged` is libmosquitto's newest logged error, where
    /// OpenSSL's reason is.
    static func connectFailure(code: Int32, errno cause: Int32, endpoint: String, logged: String?) -> String {
        switch code {
        case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_TLS_HANDSHAKE.rawValue:
            return "TLS with \(endpoint) failed: \(logged ?? MosquittoLibrary.text(code))"
        case MOSQ_ERR_ERRNO.rawValue where cause == ECONNREFUSED:
            return "connection refused by \(endpoint)"
        case MOSQ_ERR_ERRNO.rawValue:
            return "cannot connect to \(endpoint): \(errnoText(cause))"
        case MOSQ_ERR_EAI.rawValue:
            return "cannot look up \(endpoint): no such host or no name service"
        default:
            return "cannot connect to \(endpoint): \(MosquittoLibrary.text(code))"
        }
    }

    /// MQTT 3.1.1's CONNACK return codes in words.
    static func connackText(_ code: Int32) -> String {
        switch code {
        case 1: "unacceptable protocol version"
        case 2: "client identifier rejected"
        case 3: "server unavailable"
        case 4: "bad user name or password"
        case 5: "not authorised"
        default: "refused with code \(code)"
        }
    }
}
