/// A C library a module opens with dlopen on first use instead of linking it (Sources/CCurl/shim.h and
/// Sources/CMosquitto/shim.h say why), through its shim's `*_load_soname`.
public enum LibraryOnFirstUse {
    /// nil when `load` loaded the library; otherwise why not, in words that say what to do about `package`
    /// (install it, or upgrade it) to `purpose` (`upload to Traccar`). `load` calls the shim's `*_load_soname`
    /// with a buffer for dlerror's words and returns its code: `loaded`, `noFunction` (the library is too old),
    /// or another (it would not open).
    public static func failure(
        package: String, purpose: String, loaded: Int32, noFunction: Int32, _ load: (inout [CChar]) -> Int32
    ) -> String? {
        var error = [CChar](repeating: 0, count: 512)
        let code = load(&error)
        let cause = String(decoding: error.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
        switch code {
        case loaded: return nil
        case noFunction: return "\(package) is too old (\(cause)): upgrade it to \(purpose)"
        default: return "\(package) is not installed (\(cause)): install it to \(purpose)"
        }
    }
}
