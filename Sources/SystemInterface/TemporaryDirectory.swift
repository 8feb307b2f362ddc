#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under /tmp (mkdtemp), removed with everything in it by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    /// nil when mkdtemp fails (no /tmp, full, no permission).
    public init?(prefix: String) {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            return nil
        }
        path = String(cString: made)
    }

    /// Deletes the directory and what it holds (not following symbolic links).
    public func remove() {
        Self.removeTree(path)
    }

    public static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            if let directory = opendir(path) {
                var names: [String] = []
                while let entry = readdir(directory) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                        raw.bindMemory(to: CChar.self).baseAddress.map { String(cString: $0) } ?? ""
                    }
                    if name != ".", name != ".." { names.append(name) }
                }
                closedir(directory)
                for name in names { removeTree(path + "/" + name) }
            }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
