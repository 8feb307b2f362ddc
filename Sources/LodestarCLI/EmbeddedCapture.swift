import Capture

/// The real capture `lodestar demo` replays when no file is given, compiled into the binary so the demo
/// works wherever the binary is copied.
public enum EmbeddedCapture {
    public static var name: String { DemoCapture.name }

    /// The capture's bytes, exactly as recorded; nil only if the embedded text were damaged.
    public static func bytes() -> [UInt8]? {
        guard let decoded = Base64.decode(lines: DemoCapture.base64), decoded.count == DemoCapture.byteCount else {
            return nil
        }
        return decoded
    }
}
