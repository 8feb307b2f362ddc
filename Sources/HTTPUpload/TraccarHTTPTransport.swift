import Forwarding
import SystemInterface

/// Where and how locations go to a Traccar server's OsmAnd port (docs/upload.md).
public struct TraccarHTTPSettings: Sendable, Equatable {
    public enum Method: String, Sendable, Equatable {
        /// The query as an `application/x-www-form-urlencoded` body: what Traccar Client sends.
        case post
        /// The query in the URL.
        case get
    }

    /// The server's OsmAnd port: `http://traccar.example:5055`, or https behind a proxy.
    public var url: String
    /// The device's identifier as Traccar knows it.
    public var deviceID: String
    public var method: Method
    /// A file holding the battery percentage (`/sys/class/power_supply/BAT0/capacity`), read at each send;
    /// nil: no `batt`.
    public var batterySource: String?
    /// CA certificates (PEM) to check the server's certificate with instead of the system's.
    public var caFile: String?
    /// Skips checking the server's certificate and name: for a test server only.
    public var insecure: Bool
    /// Seconds one request may take, connecting included.
    public var timeout: Double
    /// HTTP basic authentication, for a reverse proxy in front of Traccar.
    public var username: String?
    public var password: String?

    public init(
        url: String, deviceID: String, method: Method = .post, batterySource: String? = nil, caFile: String? = nil,
        insecure: Bool = false, timeout: Double = 30, username: String? = nil, password: String? = nil
    ) {
        self.url = url
        self.deviceID = deviceID
        self.method = method
        self.batterySource = batterySource
        self.caFile = caFile
        self.insecure = insecure
        self.timeout = timeout
        self.username = username
        self.password = password
    }
}

/// Traccar over HTTP(S) with the OsmAnd protocol: one request per location, in order, on one kept-alive
/// connection per batch. A location is acknowledged by a 2xx answer; the batch stops at the first other answer
/// or error.
public final class TraccarHTTPTransport: UploadTransport {
    public let settings: TraccarHTTPSettings
    private let log: (String) -> Void
    /// Whether the battery source's trouble was logged, so a missing file is logged once, not every batch.
    private var batteryTroubleLogged = false

    /// `log` gets the lines worth a person's attention (a battery source that cannot be read).
    public init(settings: TraccarHTTPSettings, log: @escaping (String) -> Void) {
        self.settings = settings
        self.log = log
    }

    public var name: String { "traccar \(settings.url) \(settings.deviceID)" }

    /// `host:port` of the URL, for failures.
    var endpoint: String { Self.endpoint(of: settings.url) }

    public func send(_ batch: [StoredLocation], shouldStop: () -> Bool) -> UploadOutcome {
        guard !batch.isEmpty else { return UploadOutcome(acknowledged: 0, connectionsOpened: 0) }
        let requester: HTTPRequester
        do throws(HTTPRequesterError) {
            requester = try HTTPRequester(
                options: HTTPRequester.Options(
                    timeout: settings.timeout, caFile: settings.caFile, insecure: settings.insecure,
                    username: settings.username, password: settings.password))
        } catch {
            return UploadOutcome(acknowledged: 0, connectionsOpened: 0, failure: "\(error) for \(endpoint)")
        }
        let battery = readBattery()
        var acknowledged = 0
        var connections = 0
        for stored in batch {
            if shouldStop() {
                return UploadOutcome(acknowledged: acknowledged, connectionsOpened: connections, failure: stoppedText)
            }
            let query = OsmAndRequest.query(stored, deviceID: settings.deviceID, battery: battery)
            let result =
                switch settings.method {
                case .post: requester.perform(url: settings.url, method: .post, body: query, shouldStop: shouldStop)
                case .get:
                    requester.perform(
                        url: settings.url + (settings.url.contains("?") ? "&" : "?") + query, method: .get, body: "",
                        shouldStop: shouldStop)
                }
            connections += result.connectionsOpened
            if let failure = result.failure {
                return UploadOutcome(
                    acknowledged: acknowledged, connectionsOpened: connections, failure: describe(failure))
            }
            let status = result.status ?? 0
            guard (200..<300).contains(status) else {
                return UploadOutcome(
                    acknowledged: acknowledged, connectionsOpened: connections, failure: "HTTP \(status) from \(endpoint)")
            }
            acknowledged += 1
        }
        return UploadOutcome(acknowledged: acknowledged, connectionsOpened: connections)
    }

    private var stoppedText: String { "stopped while sending to \(endpoint)" }

    private func describe(_ failure: RequestFailure) -> String {
        switch failure {
        case .timedOut: "timed out after \(Self.seconds(settings.timeout)) s waiting for \(endpoint)"
        case .refused: "connection refused by \(endpoint)"
        case .tls(let message): "TLS error with \(endpoint): \(message)"
        case .stopped: stoppedText
        case .other(let message): "\(message) (\(endpoint))"
        }
    }

    /// The battery percentage now, or nil (logged the first time in a row it cannot be read).
    private func readBattery() -> Double? {
        guard let path = settings.batterySource else { return nil }
        let trouble: String
        do throws(SystemError) {
            let text = String(decoding: try readWholeFile(path), as: UTF8.self)
            let trimmed = text.filter { !$0.isWhitespace }
            if let percent = Double(trimmed), percent.isFinite, (0...100).contains(percent) {
                batteryTroubleLogged = false
                return percent
            }
            trouble = "\(path) holds \"\(trimmed.prefix(20))\", not a percentage"
        } catch {
            trouble = error.description
        }
        if !batteryTroubleLogged {
            log("traccar battery source: \(trouble); locations go without a battery level")
            batteryTroubleLogged = true
        }
        return nil
    }

    /// `host:port` of `url` (the scheme's port when it names none): `http://[::1]/x` is `[::1]:80`.
    static func endpoint(of url: String) -> String {
        var rest = Substring(url)
        var scheme = "http"
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") {
            scheme = rest[..<colon].lowercased()
            rest = rest[rest.index(colon, offsetBy: 3)...]
        }
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let hasPort: Bool =
            if authority.hasPrefix("[") { authority.split(separator: "]", maxSplits: 1).last?.hasPrefix(":") == true }
            else { authority.contains(":") }
        if hasPort { return String(authority) }
        return String(authority) + (scheme == "https" ? ":443" : ":80")
    }

    /// `30` for whole seconds, `0.5` otherwise.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
