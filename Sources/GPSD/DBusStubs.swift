// Lodestar links libgps statically (`link ":libgps.a"` in CGPS's module map): no dependency on the
// libgps.so soname, which changes between Debian releases (.28 in bookworm, .30 in trixie), and no D-Bus.
// libgps's core calls its D-Bus back end only when opened with the host "DBUS export", which Lodestar never
// does; but the reference alone would pull that back end in, and with it libdbus, libsystemd, libgcrypt and
// five more shared libraries: about 1 MB of memory on a Pi Zero for nothing. These two definitions stand in
// for it, so the linker never takes libgps_dbus.o from the archive. Their signatures are libgps 3.22's.

/// `int gps_dbus_open(struct gps_data_t *)`: D-Bus export is not supported; libgps's DBUS_FAILURE (-9).
@_cdecl("gps_dbus_open")
func lodestarDBusOpenUnsupported(_ data: UnsafeMutableRawPointer?) -> Int32 { -9 }

/// `int gps_dbus_mainloop(struct gps_data_t *, int timeout, void (*hook)(struct gps_data_t *))`.
@_cdecl("gps_dbus_mainloop")
func lodestarDBusMainloopUnsupported(
    _ data: UnsafeMutableRawPointer?, _ timeout: Int32, _ hook: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
) -> Int32 { -1 }
