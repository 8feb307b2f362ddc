#if canImport(Glibc)
    import Glibc
#endif

/// Who may read what the service writes (systemd/lodestar.service): root and group lodestar. The status and
/// the store say where someone was, so they are not for every user; hardware.md says how to join.
enum ServiceFiles {
    static let group = "lodestar"

    /// What to do when `path` (or a folder above it) refused this user: nil when permission is not why.
    static func permissionHint(for path: String) -> String? {
        guard access(path, R_OK) != 0, errno == EACCES else { return nil }
        return "the service's status and store are readable by root and group \(group) only: "
            + "sudo usermod -aG \(group) $USER, then log in again (hardware.md, \"Permissions\")"
    }
}
