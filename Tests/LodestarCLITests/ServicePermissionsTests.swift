@testable import Daemon
import Foundation
import GPSModel
import LocationStore
import SystemInterface
import Testing

/// Who may read what the service writes, as the users hardware.md names: the service user `lodestar`, a
/// member of group `lodestar`, and a user outside it. Root only: users are made with useradd inside a mount
/// namespace whose /etc is a copy, so the machine's own users and files are never touched.
@Suite(.serialized) struct ServicePermissionsTests {

    static var canRun: Bool {
        getuid() == 0 && ["/usr/bin/unshare", "/usr/sbin/runuser", "/usr/sbin/useradd"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        } && StoreExportExecutable.path != nil
    }

    /// A folder every test user can reach, with a copy of /etc for the namespace and of the binary.
    final class Sandbox {
        let path: String
        init() throws {
            path = NSTemporaryDirectory() + "lodestar-permissions-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: path + "/bin", withIntermediateDirectories: true)
            chmod(path, 0o755)
            try FileManager.default.copyItem(atPath: try #require(StoreExportExecutable.path), toPath: path + "/bin/lodestar")
            #expect(Self.shell("cp -a /etc \(path)/etc").status == 0)
        }
        deinit { TemporaryDirectory.removeTree(path) }

        /// Runs `script` with /bin/sh in a mount namespace that sees the copy as /etc; its exit status and output.
        func run(_ script: String) -> (status: Int32, output: String) {
            Self.shell("unshare -m /bin/sh -c 'mount --bind \(path)/etc /etc && exec /bin/sh -c \"$0\"' '\(script.replacingOccurrences(of: "'", with: "'\\''"))'")
        }

        static func shell(_ script: String) -> (status: Int32, output: String) {
            let out = NSTemporaryDirectory() + "lodestar-permissions-out-\(UUID().uuidString)"
            defer { unlink(out) }
            guard let child = try? ChildProcess(executable: "/bin/sh", arguments: ["-c", script + " 2>&1"], standardOutput: out)
            else { return (-1, "cannot start /bin/sh") }
            let status = child.waitForExit(timeout: 60).map { $0 >> 8 } ?? -1
            return (status, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
        }
    }

    /// The users hardware.md names, made as scripts/install makes the service's.
    static let users = """
        getent group lodestar >/dev/null || groupadd --system lodestar
        getent passwd lodestar >/dev/null || useradd --system --gid lodestar --no-create-home --shell /usr/sbin/nologin lodestar
        getent passwd reader >/dev/null || useradd --system --user-group --groups lodestar --no-create-home reader
        getent passwd other >/dev/null || useradd --system --user-group --no-create-home other
        """

    @Test(.enabled(if: canRun)) func theGroupReadsStatusAndStoreAndNobodyElseDoes() throws {
        let sandbox = try Sandbox()
        let state = sandbox.path + "/state", runtime = sandbox.path + "/run", status = sandbox.path + "/status"
        let lodestar = sandbox.path + "/bin/lodestar"
        // The service as the unit runs it: user and group lodestar, UMask=0027, its folders made 0750 by
        // systemd. No gpsd (port 1): it opens its store, notes that gpsd is gone, and is stopped.
        let service = """
            umask 0027
            setpriv --reuid=lodestar --regid=lodestar --init-groups \(lodestar) run --state-dir \(state) \
              --runtime-dir \(runtime) --gpsd 127.0.0.1:1 --profile car 2>/dev/null &
            service=$!
            """
        let setUp = sandbox.run(
            Self.users + """

                install -d -m 0750 -o lodestar -g lodestar \(state) \(runtime) \(status)
                \(service)
                sleep 3; kill $service; wait $service
                stat -c '%a %U %G' \(state)/store.sqlite
                test ! -e \(state)/store.sqlite-wal && echo no WAL
                """)
        try #require(setUp.status == 0, "\(setUp.output)")
        #expect(setUp.output.contains("640 lodestar lodestar") && setUp.output.contains("no WAL"), "\(setUp.output)")
        // A status as the running service leaves it (this process stands in for it: a live pid).
        let now = UTCTime.now()
        try StatusFile(runtimeDirectory: status).write(
            DaemonStatus(
                pid: getpid(), started: now, updated: now, profile: "car", mechanism: "ubx", regime: .continuous,
                regimeReason: "moving"))
        #expect(sandbox.run("chown lodestar:lodestar \(status)/status.json && chmod 0640 \(status)/status.json").status == 0)

        // The member first: the service user's own reading may leave a -shm behind that the member could use.
        for user in ["reader", "lodestar"] {
            let shown = sandbox.run("runuser -u \(user) -- \(lodestar) status --runtime-dir \(status)")
            #expect(shown.status == 0, "\(user): \(shown.output)")
            // The service stopped: no WAL, a folder the reader may not write.
            let export = sandbox.run("runuser -u \(user) -- \(lodestar) store export --store \(state)/store.sqlite")
            #expect(export.status == 0 && export.output.contains("receiverLost"), "\(user): \(export.output)")
        }
        let refused = sandbox.run("runuser -u other -- \(lodestar) status --runtime-dir \(status); echo \"exit $?\"")
        #expect(refused.output.contains("exit 66"), "\(refused.output)")
        #expect(refused.output.contains("sudo usermod -aG lodestar $USER"), "\(refused.output)")
        let refusedStore = sandbox.run(
            "runuser -u other -- \(lodestar) store export --store \(state)/store.sqlite; echo \"exit $?\"")
        #expect(
            refusedStore.output.contains("exit 66") && refusedStore.output.contains("group lodestar"), "\(refusedStore.output)")

        // The service running: the member reads through the WAL and the -shm it keeps.
        let running = sandbox.run(
            """
            \(service)
            sleep 3
            test -e \(state)/store.sqlite-wal && echo WAL
            runuser -u reader -- \(lodestar) store export --store \(state)/store.sqlite | grep -c receiverLost
            kill $service; wait $service
            """)
        #expect(running.output.contains("WAL\n"), "\(running.output)")
        let count = running.output.split(separator: "\n").last.flatMap { Int($0) } ?? 0
        #expect(count >= 2, "both runs' events: \(running.output)")

        // The service killed: its WAL and -shm stay, and the member reads the WAL's rows through them.
        let crashed = sandbox.run(
            """
            \(service)
            sleep 3
            kill -KILL $service; wait $service
            test -e \(state)/store.sqlite-wal && echo WAL
            runuser -u reader -- \(lodestar) store export --store \(state)/store.sqlite | grep -c receiverLost
            """)
        #expect(crashed.output.contains("WAL\n"), "\(crashed.output)")
        let afterCrash = crashed.output.split(separator: "\n").last.flatMap { Int($0) } ?? 0
        #expect(afterCrash >= 3, "the three runs' events: \(crashed.output)")
    }

    @Test(.enabled(if: canRun)) func theInstallerTheUnitAndTheDocsAgree() throws {
        let unit = try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/lodestar.service"), encoding: .utf8)
        for line in ["User=lodestar", "Group=lodestar", "UMask=0027", "StateDirectoryMode=0750", "RuntimeDirectoryMode=0750"] {
            #expect(unit.split(separator: "\n").contains(Substring(line)), "the unit lacks \(line)")
        }
        let hardware = try String(contentsOf: repositoryRoot.appendingPathComponent("hardware.md"), encoding: .utf8)
        #expect(hardware.contains("sudo usermod -aG lodestar $USER"))
        #expect(hardware.contains("`0640`, owner root, group `lodestar`"))

        // scripts/install on the live system, with /usr/local and /etc the namespace's own.
        let sandbox = try Sandbox()
        let install = repositoryRoot.appendingPathComponent("scripts/install").path
        let result = sandbox.run(
            """
            mount -t tmpfs none /usr/local && bash \(install) --binary \(sandbox.path)/bin/lodestar >/dev/null \
            && stat -c '%a %U %G' /etc/lodestar/lodestar.json \
            && runuser -u lodestar -- \(sandbox.path)/bin/lodestar config validate /etc/lodestar/lodestar.json >/dev/null \
            && echo readable by the service
            """)
        #expect(result.output.contains("640 root lodestar"), "\(result.output)")
        #expect(result.output.contains("readable by the service"), "\(result.output)")
    }
}

/// The built binary, beside the test bundle.
enum StoreExportExecutable {
    static var path: String? {
        let bundleFolder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidate = bundleFolder.appendingPathComponent("lodestar").path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }
}
