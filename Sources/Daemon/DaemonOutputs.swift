import SystemInterface

/// The outputs a config names, opened: relative paths resolved against the state directory (files) or the
/// runtime directory (the socket). One that cannot be opened is logged and left out; the others run.
public enum DaemonOutputs {
    public static func open(
        _ configuration: DaemonConfiguration, standardOutput: @escaping StdoutTrackOutput.Sink = StdoutTrackOutput.standardOutput,
        logger: Logger
    ) -> [any TrackOutput] {
        let outputs = configuration.outputs
        var opened: [any TrackOutput] = []
        if let jsonl = outputs.jsonl {
            opened.append(
                JSONLTrackOutput(
                    path: DaemonConfiguration.resolve(jsonl.path, under: configuration.stateDirectory), settings: jsonl))
        }
        if let gpx = outputs.gpx {
            opened.append(
                DailyGPXOutput(
                    directory: DaemonConfiguration.resolve(gpx.directory, under: configuration.stateDirectory),
                    settings: gpx))
        }
        if let stdout = outputs.stdout {
            opened.append(StdoutTrackOutput(settings: stdout, sink: standardOutput))
        }
        if let socket = outputs.socket {
            let path = DaemonConfiguration.resolve(socket.path, under: configuration.runtimeDirectory)
            do throws(OutputFailure) {
                // Its notices (the group not set, a client dropped) are logged by the service as they come.
                opened.append(try LocationSocketServer(path: path, settings: socket))
            } catch {
                logger.error("cannot open the locations socket: \(error); running without it")
            }
        }
        return opened
    }
}
