#!/usr/bin/python3
"""Benchmark (not a test) of what `lodestar run` writes to storage: the SD-card wear of a Pi. The daemon runs
with its default configuration (an empty config file: the car profile, the store, the jsonl file, the daily
GPX files and the socket on; docs/config.md), only what the bench needs set by flags: the private gpsd, a
scratch state directory on the disk, the runtime directory on tmpfs (as /run is), no receiver commands (the
pty has no receiver) and --clock-rate SPEED. gpxlogger (gpsd's own logger, a GPX file) runs beside it on the
same stream as a reference. The private gpsd, the pty feed and the client start-up are bench/daemon.py's.

Both run under `strace -f -y -ttt -e trace=<syncs and writes>`; counted are the calls made while the capture
was fed (from its first epoch until gpsd had read the last), and /proc/PID/io's write_bytes and wchar over the
same window (write_bytes: the bytes whose pages the process dirtied on a disk-backed file system, what reaches
the card; wchar: every byte passed to write-like calls, pipes, sockets and tmpfs included). Calls are split by
the file they name (strace -y): on the disk (the state directory, gpxlogger's file) or not (the runtime
directory on tmpfs, stderr, sockets).

Normalisation: per hour of receiver time, the receiver time being the capture's own seconds as fed (gaps over
5 s shortened to 5 s, as daemon.py's feed does), so figures from a slice at 1x and a whole capture at 100x
compare. Which clock times each sync matters when SPEED > 1 (see docs/benchmarks.md): --clock-rate scales the
policy's clock and the store's (Sources/Daemon/DaemonService.swift, makeForwarder), and the jsonl and GPX
files sync with the store, but their own 300 s intervals run on the wall clock passed as `now`
(Sources/Daemon/Outputs/RotatingFile.swift, DailyGPXOutput.swift) and state.json is saved every
store.syncInterval of the monotonic clock (DaemonService.housekeeping).
At SPEED > 1 those are understated SPEED times per receiver hour; the bench says so. At SPEED 1 every clock
is the capture's.

usage: flash.py LODESTAR_BINARY NAME CAPTURE SECONDS SPEED [NAME CAPTURE SECONDS SPEED ...]
SECONDS: the first SECONDS of the capture's receiver time (0: all of it). Standard library only."""
import concurrent.futures, itertools, os, re, shutil, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # importing daemon.py leaves no __pycache__ in bench/
from daemon import PrivateGPSD, epochs, looped, read, settled, start_clients, stop  # noqa: E402

SYNCS = ("fsync", "fdatasync", "sync_file_range", "msync", "sync", "syncfs")
WRITES = ("write", "pwrite64", "writev", "pwritev", "pwritev2")
TRACE = ",".join(SYNCS + WRITES)
JOURNALD = "journald's default SyncIntervalSec=5min: at most 12 syncs/h of the journal for scale (plus one per CRIT/ALERT/EMERG message)"
# One traced call: "PID SECONDS.MICRO name(ARGS" (strace -f -o FILE -ttt); an unfinished call's line has its
# name and first argument, its "<... name resumed>" line is not counted again.
CALL = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(\w+)\((.*)$")
FD_PATH = re.compile(r"^-?\d+<([^>]*)>")
RESULT = re.compile(r"=\s+(-?\d+)")


def io_counters(pid):
    return {k: int(v) for k, v in (line.split(": ") for line in read(f"/proc/{pid}/io").splitlines())}


def traced_pid(wrapper):
    """The process strace runs (its only child)."""
    for task in os.listdir(f"/proc/{wrapper}/task"):
        children = read(f"/proc/{wrapper}/task/{task}/children").split()
        if children:
            return int(children[0])
    sys.exit("strace has no child")


def count_calls(trace_file, start, end, disk, by_file=False):
    """{(call, where): [calls, bytes written]} over [start, end] wall seconds; `where` is "disk" for a file
    under one of the `disk` directories (msync and sync name no file: counted there too), else "other"; with
    `by_file`, the disk file's name under its directory instead of "disk"."""
    counts = {}
    unfinished = {}
    with open(trace_file, errors="replace") as f:
        for line in f:
            if "resumed>" in line:
                key = unfinished.pop(line.split()[0], None)
                found = RESULT.search(line.rsplit(")", 1)[-1]) if key else None
                if found and key[0] in WRITES and int(found.group(1)) > 0:
                    counts[key][1] += int(found.group(1))
                continue
            match = CALL.match(line)
            if not match or match.group(3) not in SYNCS + WRITES:
                continue
            pid, stamp, name, rest = match.groups()
            if not start <= float(stamp) <= end:
                continue
            path = FD_PATH.match(rest)
            inside = [d for d in disk if path and path.group(1).startswith(d)]
            where = "disk" if path is None or inside else "other"
            if by_file and where == "disk":
                where = path.group(1)[len(inside[0]):].lstrip("/") if inside else name + "(no file)"
            key = (name, where)
            counts.setdefault(key, [0, 0])[0] += 1
            if "<unfinished ...>" in rest:
                unfinished[pid] = key
                continue
            found = RESULT.search(rest.rsplit(")", 1)[-1])
            if name in WRITES and found and int(found.group(1)) > 0:
                counts[key][1] += int(found.group(1))
    return counts


def sync_times(trace_file, start, end, needle):
    """(wall seconds, "call file") of each sync on a file whose name contains `needle`, over the window."""
    found = []
    with open(trace_file, errors="replace") as f:
        for line in f:
            match = CALL.match(line)
            if match and match.group(3) in SYNCS and needle in line and start <= float(match.group(2)) <= end:
                path = FD_PATH.match(match.group(4))
                found.append((float(match.group(2)), f"{match.group(3)} {os.path.basename(path.group(1)) if path else ''}"))
    return found


def played_seconds(stream):
    """Receiver seconds as fed: the gaps between epochs, those over 5 s shortened to 5 s (PrivateGPSD.feed)."""
    total, previous = 0.0, None
    for stamp, _ in stream:
        if previous is not None:
            total += min(max(stamp - previous, 0), 5)
        previous = stamp
    return total


def situation(binary, name, capture, seconds, speed, disk_root):
    """The report of one situation, as lines."""
    lines_out = []
    say = lines_out.append
    groups = epochs(open(capture, "rb").read())
    if seconds > 0:
        stream = list(looped(groups, seconds / 3600))
    else:  # the capture once: its first loop
        stream = list(itertools.islice(looped(groups, 1e6), sum(1 for t, _ in groups if t is not None)))
    receiver = played_seconds(stream) + (stream[1][0] - stream[0][0] if len(stream) > 1 else 1)
    work = tempfile.mkdtemp(prefix="lodestar-flash-", dir="/dev/shm")  # gpsd, logs, traces, runtime: memory
    disk = tempfile.mkdtemp(prefix="lodestar-flash-", dir=disk_root)  # what a Pi keeps on its card
    os.chmod(work, 0o755)
    state, gpx = os.path.join(disk, "state"), os.path.join(disk, "gpxlogger.gpx")
    config = os.path.join(work, "lodestar.json")
    with open(config, "w") as f:
        f.write("{}\n")  # the whole default configuration (docs/config.md)
    daemon = PrivateGPSD(work)
    try:
        lodestar = [binary, "run", "--config", config, "--gpsd", f"127.0.0.1:{daemon.port}", "--state-dir", state,
                    "--runtime-dir", os.path.join(work, "run"), "--no-power-control", "--clock-rate", f"{speed:g}"]
        gpxlogger = [os.environ.get("GPXLOGGER", "gpxlogger"), "-e", "sockets", "-f", gpx,
                     f"127.0.0.1:{daemon.port}"]
        traces = {n: os.path.join(work, n + ".strace") for n in ("lodestar", "gpxlogger")}
        commands = {n: ["strace", "-f", "-y", "-ttt", "-e", "trace=" + TRACE, "-o", traces[n]] + c
                    for n, c in (("lodestar", lodestar), ("gpxlogger", gpxlogger))}
        clients, outputs = start_clients(commands, work)
        pids = {n: traced_pid(p.pid) for n, p in clients.items()}
        before, window = {}, []

        def on_epoch(stamp):
            if not window:
                window.append(time.time())
                before.update({n: io_counters(p) for n, p in pids.items()})
        say(f"{name}: {capture}, the first {receiver / 60:.1f} min of receiver time"
              f"{'' if seconds > 0 else ' (all of it)'} at {speed:g}x (--clock-rate {speed:g}); "
              f"{len(stream)} epochs")
        daemon.feed(stream, speed, on_epoch)
        time.sleep(0.2)  # the last epoch through gpsd and the clients
        window.append(time.time())
        after = {n: io_counters(p) for n, p in pids.items()}
        settled(list(pids.values()), [outputs[n][0] for n in pids])
        # The traced clients first: strace told SIGTERM detaches and leaves its child running (a lodestar
        # left over shares its binary's pages with the next bench's and halves its private memory).
        for pid in pids.values():
            os.kill(pid, signal.SIGTERM)
        stop(clients)
        lines = sum(1 for _ in open(os.path.join(state, "track", "locations.jsonl")))
        points = read(gpx).count("<trkpt")
        wall = window[1] - window[0]
        per_hour = 3600 / receiver
        say(f"  window: {wall:.1f} s wall = {receiver:.0f} s receiver time; figures x{per_hour:.3f} = per "
              f"receiver hour; lodestar wrote {lines} jsonl lines, gpxlogger {points} track points")
        if speed > 1:
            say(f"  NOTE: at {speed:g}x the jsonl and GPX fsyncs of their own (every 300 s of the wall clock) and "
                  f"the state.json saves (every 300 s of the monotonic clock) are about {speed:g}x too few per receiver hour; "
                  f"the store's timers follow --clock-rate but are checked once a wall second (DaemonService's tick), "
                  f"so its 60 s bounds and checkpoint run every {max(60, speed):g} receiver s. Run at 1x for all of them.")
        say(f"  {'client':10} {'write_bytes':>12} {'wchar':>12} {'syncs':>6} {'writes':>7} {'bytes written':>14}"
              f"   (per receiver hour; syncs/writes/bytes: calls on files on the disk)")
        for n in ("lodestar", "gpxlogger"):
            calls = count_calls(traces[n], window[0], window[1], [disk])
            syncs = sum(c for (k, w), (c, _) in calls.items() if k in SYNCS and w == "disk")
            writes = sum(c for (k, w), (c, _) in calls.items() if k in WRITES and w == "disk")
            written = sum(b for (k, w), (_, b) in calls.items() if k in WRITES and w == "disk")
            other = sum(c for (k, w), (c, _) in calls.items() if k in WRITES and w == "other")
            wb = after[n]["write_bytes"] - before[n]["write_bytes"]
            wc = after[n]["wchar"] - before[n]["wchar"]
            say(f"  {n:10} {wb * per_hour:12,.0f} {wc * per_hour:12,.0f} {syncs * per_hour:6.0f}"
                  f" {writes * per_hour:7.0f} {written * per_hour:14,.0f}")
            by_call = ", ".join(f"{k} {c * per_hour:.0f}" for (k, w), (c, _) in sorted(calls.items()) if w == "disk")
            files = {}
            for (k, where), (c, b) in count_calls(traces[n], window[0], window[1], [disk], by_file=True).items():
                if where != "other":
                    entry = files.setdefault(re.sub(r"\.tmp-\d+$", ".tmp", where), [0, 0, 0])
                    entry[0 if k in SYNCS else 1] += c
                    entry[2] += b
            say(f"    {n} on the disk, per call: {by_call or 'none'}")
            say(f"    {n} per file (syncs/writes/bytes): " + ("; ".join(
                f"{f} {sy * per_hour:.0f}/{wr * per_hour:.0f}/{by * per_hour:,.0f}"
                for f, (sy, wr, by) in sorted(files.items())) or "none"))
            say(f"    {n} writes elsewhere (stderr, sockets, tmpfs): {other * per_hour:.0f}")
            say(f"    {n} in the window as measured: write_bytes {wb:,}, wchar {wc:,}, {syncs} syncs, "
                  f"{writes} writes ({written:,} bytes) on the disk")
        # The store's syncs next to the documented rule (docs/config.md, store.syncInterval: every 300 s, at a
        # receiver power-down, after a deferred batch, at a pause, at stop), from the regime changes and events
        # in the jsonl. SQLite syncs the WAL and the database at each checkpoint (a sync of store.sqlite itself
        # is one): the service checkpoints when it applies the store's bounds (every 60 s, StoreForwarder.tick) and
        # deleted rows or the WAL passed the bound (LocationStore.compact), and SQLite on its own when the WAL
        # passes wal_autocheckpoint pages.
        walls = sync_times(traces["lodestar"], window[0], window[1], "store.sqlite")
        store_syncs = [((at - window[0]) * speed, what) for at, what in walls]
        checkpoints = [at for at, what in walls if what.endswith("store.sqlite")]
        # A checkpoint syncs the WAL just before its sync of the database file, and SQLite syncs the WAL's header
        # again when the next commit starts reusing it (synchronous = NORMAL): within an epoch or two (3 receiver
        # s) while locations come. A service's own sync in that time is counted with the checkpoint.
        by_checkpoint = [at for at, _ in walls if any(-0.1 <= at - c <= max(0.1, 3 / speed) for c in checkpoints)]
        own = len(store_syncs) - len(by_checkpoint)
        downs = pauses = batches = 0
        asleep = None
        for line in open(os.path.join(state, "track", "locations.jsonl")):
            regime = re.search(r'"type":"regime".*?"regime":"([^"]+)"', line)
            if regime:
                sleeping = regime.group(1) in ("off", "standby")
                downs += sleeping and sleeping != asleep
                asleep = sleeping
            pauses += '"type":"event"' in line and '"kind":"paused"' in line
            batches += '"type":"event"' in line and '"kind":"deferredFinished"' in line
        periodic = int(receiver // 300)
        say(f"    store syncs per receiver hour: {len(store_syncs) * per_hour:.0f} = {len(by_checkpoint) * per_hour:.0f} "
            f"around SQLite's {len(checkpoints) * per_hour:.0f} WAL checkpoints (the WAL, store.sqlite, the "
            f"WAL on its next commit) + {own * per_hour:.0f} others (the service's own); docs/config.md's rule (store.syncInterval) "
            f"allows at most {(periodic + downs + pauses + batches) * per_hour:.0f} ({periodic * per_hour:.0f} "
            f"every 300 s, {downs * per_hour:.0f} at receiver power-downs, {pauses * per_hour:.0f} at pauses, "
            f"{batches * per_hour:.0f} after deferred batches), plus one at stop")
        say("    store syncs at receiver s: " + ", ".join(f"{at:.0f} {what.split()[1]}" for at, what in store_syncs[:40])
            + (f" … ({len(store_syncs) - 40} more)" if len(store_syncs) > 40 else ""))
        return lines_out
    finally:
        daemon.stop()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(disk, ignore_errors=True)


def main(argv):
    if len(argv) < 6 or (len(argv) - 2) % 4:
        sys.exit(__doc__)
    if not shutil.which("strace"):
        sys.exit("flash.py: strace is not installed (apt-get install strace)")
    binary = argv[1]
    disk_root = os.environ.get("FLASH_DIR", "/var/tmp")
    print(f"lodestar run: {{}} config (the defaults: profile car, store syncInterval 300 s, jsonl fsyncInterval "
          f"300 s, GPX on, socket on), --no-power-control; state directory under {disk_root} "
          f"({subprocess.run(['df', '--output=fstype', disk_root], capture_output=True, text=True).stdout.split()[-1]}), "
          f"runtime directory and logs on tmpfs")
    print(JOURNALD)
    runs = [(argv[i], argv[i + 1], float(argv[i + 2]), float(argv[i + 3])) for i in range(2, len(argv), 4)]
    # The situations run side by side (each its own gpsd, daemon and directories): at 1x they are mostly waiting.
    with concurrent.futures.ThreadPoolExecutor(len(runs)) as pool:
        reports = [pool.submit(situation, binary, *run, disk_root) for run in runs]
        for report in reports:
            print("\n".join(report.result()), flush=True)


if __name__ == "__main__":
    main(sys.argv)
