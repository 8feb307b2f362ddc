import CCurl
import SystemInterface

#if canImport(Glibc)
import Glibc
#endif

/// Why an `HTTPRequester` could not be made or set up.
struct HTTPRequesterError: Error, Sendable, CustomStringConvertible {
    var description: String
}

/// libcurl, which lodestar opens on first use instead of linking it (CCurl's shim.h says why).
enum CurlLibrary {
    /// nil once libcurl is loaded and curl_global_init has run, once per process: a static `let` is initialised
    /// once, under the runtime's lock, the first time any thread reads it (curl_global_init itself is not
    /// thread-safe). Otherwise why libcurl cannot be used.
    static let failure: HTTPRequesterError? = {
        if let failure = load(CCURL_SONAME) { return failure }
        let code = ccurl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard code == CURLE_OK else {
            return HTTPRequesterError(description: "curl_global_init failed: \(HTTPRequester.text(code))")
        }
        return nil
    }()

    /// Opens libcurl from `soname` (Debian's libcurl4 ships libcurl.so.4) for the ccurl_ functions; nil, or why
    /// not in words that say what to install.
    static func load(_ soname: String) -> HTTPRequesterError? {
        let failure = LibraryOnFirstUse.failure(
            package: "libcurl4", purpose: "upload to Traccar", loaded: CCURL_LOADED, noFunction: CCURL_NO_FUNCTION
        ) { ccurl_load_soname(soname, &$0, $0.count) }
        return failure.map { HTTPRequesterError(description: $0) }
    }
}

/// How a request ended when it got no HTTP answer.
enum RequestFailure: Sendable, Equatable {
    /// The whole request took longer than the requester's timeout.
    case timedOut
    /// The server's host refused the TCP connection (nothing listens on the port).
    case refused
    /// TLS could not be set up: curl's words (an unknown CA, a name mismatch, a bad CA file).
    case tls(String)
    /// `shouldStop` turned true.
    case stopped
    /// Anything else, in curl's words.
    case other(String)
}

/// One request's end: an HTTP status, or a failure; and how many connections curl opened for it.
struct RequestResult: Sendable, Equatable {
    var status: Int?
    var failure: RequestFailure?
    var connectionsOpened: Int
    /// The answer's body when the request asked for it (`keepingBody`), else empty.
    var body: [UInt8] = []
}

/// A curl easy handle kept for a run of requests, so they share one connection (HTTP/1.1 keep-alive) as long
/// as the server keeps it open. Used from one thread at a time; `deinit` closes the connection.
final class HTTPRequester {
    enum Method: Sendable { case get, post }

    struct Options: Sendable {
        var timeout: Double
        var caFile: String?
        var insecure: Bool
        var username: String?
        var password: String?
    }

    /// What the progress callback asks; set only while `perform` runs.
    private final class StopCheck {
        var shouldStop: (() -> Bool)?
    }

    /// Where the write callback puts a body that is kept (Traccar's OsmAnd answers have none worth keeping;
    /// a test reads Traccar's REST API through this).
    private final class BodySink {
        var keeps = false
        var bytes: [UInt8] = []
        /// More than this is not an answer this requester is for.
        static let limit = 16 << 20
    }

    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let stopCheck = StopCheck()
    private let bodySink = BodySink()
    /// Whether a connection is open after the last request (curl keeps it unless the server closed it).
    private var connectionMayBeOpen = false

    init(options: Options) throws(HTTPRequesterError) {
        if let failure = CurlLibrary.failure { throw failure }
        guard let handle = ccurl_easy_init() else { throw HTTPRequesterError(description: "curl_easy_init failed") }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))

        // Drops the body unless asked to keep it: curl's default would print it to standard output.
        let takeBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
            bytes, size, count, data in
            let length = size * count
            guard let data, let bytes else { return length }
            let sink = Unmanaged<BodySink>.fromOpaque(data).takeUnretainedValue()
            guard sink.keeps else { return length }
            // A short count makes curl fail the transfer (CURLE_WRITE_ERROR).
            guard sink.bytes.count + length <= BodySink.limit else { return 0 }
            sink.bytes += UnsafeRawBufferPointer(start: bytes, count: length)
            return length
        }
        // Any nonzero answer makes curl abort the transfer with CURLE_ABORTED_BY_CALLBACK; curl calls this
        // at least once a second, also while it waits to connect or for an answer.
        let progress: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> Int32 = {
            data, _, _, _, _ in
            guard let data else { return 0 }
            let check = Unmanaged<StopCheck>.fromOpaque(data).takeUnretainedValue()
            return check.shouldStop?() == true ? 1 : 0
        }
        let milliseconds = Int(min(max(options.timeout, 0.001), 86_400) * 1000)
        var results: [(String, CURLcode)] = [
            ("CURLOPT_NOSIGNAL", ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)),
            ("CURLOPT_ERRORBUFFER", ccurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)),
            ("CURLOPT_WRITEFUNCTION", ccurl_setopt_write_function(handle, takeBody)),
            ("CURLOPT_WRITEDATA", ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(bodySink).toOpaque())),
            ("CURLOPT_NOPROGRESS", ccurl_setopt_long(handle, CURLOPT_NOPROGRESS, 0)),
            ("CURLOPT_XFERINFOFUNCTION", ccurl_setopt_xferinfo_function(handle, progress)),
            (
                "CURLOPT_XFERINFODATA",
                ccurl_setopt_pointer(handle, CURLOPT_XFERINFODATA, Unmanaged.passUnretained(stopCheck).toOpaque())
            ),
            ("CURLOPT_TIMEOUT_MS", ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds)),
            ("CURLOPT_CONNECTTIMEOUT_MS", ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds)),
            // A Traccar URL is http or https; nothing else (file:, ftp:) is followed or read.
            ("CURLOPT_PROTOCOLS_STR", ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")),
            ("CURLOPT_USERAGENT", ccurl_setopt_string(handle, CURLOPT_USERAGENT, "lodestar")),
        ]
        if let caFile = options.caFile {
            results.append(("CURLOPT_CAINFO", ccurl_setopt_string(handle, CURLOPT_CAINFO, caFile)))
        }
        if options.insecure {
            results.append(("CURLOPT_SSL_VERIFYPEER", ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 0)))
            results.append(("CURLOPT_SSL_VERIFYHOST", ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 0)))
        }
        // Basic authentication is curl's default scheme once a user name is set.
        if let username = options.username {
            results.append(("CURLOPT_USERNAME", ccurl_setopt_string(handle, CURLOPT_USERNAME, username)))
            results.append(("CURLOPT_PASSWORD", ccurl_setopt_string(handle, CURLOPT_PASSWORD, options.password ?? "")))
        }
        if let (option, code) = results.first(where: { $0.1 != CURLE_OK }) {
            ccurl_easy_cleanup(handle)
            errorBuffer.deallocate()
            throw HTTPRequesterError(description: "curl_easy_setopt \(option): \(Self.text(code))")
        }
    }

    deinit {
        ccurl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Sends one request on the handle's connection (opening one when there is none) and waits for its answer,
    /// its timeout, or `shouldStop`. `keepingBody`: the answer's body is in the result.
    func perform(
        url: String, method: Method, body: String, keepingBody: Bool = false, shouldStop: () -> Bool
    ) -> RequestResult {
        errorBuffer[0] = 0
        bodySink.keeps = keepingBody
        bodySink.bytes = []
        defer { bodySink.bytes = [] }
        var setup = ccurl_setopt_string(handle, CURLOPT_URL, url)
        if setup == CURLE_OK {
            switch method {
            case .get: setup = ccurl_setopt_long(handle, CURLOPT_HTTPGET, 1)
            case .post:
                // Copied by curl; sent as application/x-www-form-urlencoded, curl's default for a POST body.
                setup = ccurl_setopt_long(handle, CURLOPT_POST, 1)
                if setup == CURLE_OK { setup = ccurl_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, body) }
            }
        }
        guard setup == CURLE_OK else {
            return RequestResult(status: nil, failure: .other("curl_easy_setopt: \(Self.text(setup))"), connectionsOpened: 0)
        }
        let wasOpen = connectionMayBeOpen
        let code = withoutActuallyEscaping(shouldStop) { shouldStop in
            stopCheck.shouldStop = shouldStop
            defer { stopCheck.shouldStop = nil }
            return ccurl_easy_perform(handle)
        }
        var connects = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &connects)
        guard code == CURLE_OK else {
            connectionMayBeOpen = false
            var osError = 0
            _ = ccurl_getinfo_long(handle, CURLINFO_OS_ERRNO, &osError)
            let failure = classify(code, osError: Int32(osError))
            // A connection attempt that failed is still a radio wake-up, though curl counts only the ones
            // that were made.
            let attempted = connects == 0 && !wasOpen && (failure == .refused || failure == .timedOut)
            return RequestResult(status: nil, failure: failure, connectionsOpened: attempted ? 1 : connects)
        }
        var status = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        connectionMayBeOpen = true
        return RequestResult(status: status, failure: nil, connectionsOpened: connects, body: bodySink.bytes)
    }

    private func classify(_ code: CURLcode, osError: Int32) -> RequestFailure {
        let message = errorBuffer[0] != 0 ? String(cString: errorBuffer) : Self.text(code)
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timedOut
        case CURLE_ABORTED_BY_CALLBACK: return .stopped
        case CURLE_COULDNT_CONNECT where osError == ECONNREFUSED: return .refused
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED:
            return .tls(message)
        default: return .other(message)
        }
    }

    static func text(_ code: CURLcode) -> String {
        ccurl_easy_strerror(code).map { String(cString: $0) } ?? "curl error \(code.rawValue)"
    }
}
