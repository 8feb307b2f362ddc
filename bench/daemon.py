#!/usr/bin/python3
"""Benchmark (not a test) of the daemon's live path. Two parts, each against one private gpsd that decodes
NMEA fed into a pty, as a receiver would deliver it:

  cpu   gpxlogger (a C client decoding through libgps) and lodestar side by side on the same gpsd stream of a
        long drive; the CPU time (utime+stime from /proc/PID/stat, and schedstat's nanoseconds) of each,
        read just before it is stopped, and their ratio. Target: lodestar <= 1.0x gpxlogger. Each connects
        before the other starts, gpxlogger first in odd runs and lodestar first in even ones (gpsd sends to
        the first first, which costs it more on two cores: see cpu); `taskset -c 1 bench/daemon.sh cpu` puts
        gpsd and both clients on one core, as on a single-core Pi Zero W, where the order matters less.
  soak  lodestar alone on 24 h+ of receiver time (the capture looped, its times and dates moved on by the
        capture's length each loop, checksums redone), fed at high speed; VmRSS/VmHWM sampled through the
        run. Targets: peak RSS <= 8 MiB, < 5 % RSS growth between receiver hour 1 and the end.

The lodestar command line comes from LODESTAR_ARGS (words after the binary; {host}, {port} and {state} are
filled in), by default DEFAULT_ARGS below: `lodestar run` with every fix delivered on stdout. Its end is taken as: its CPU time and output
unchanged for 0.5 s after gpsd closed the device (no message from the command needed).

  callgrind  a slice of the drive (CALLGRIND_EPOCHS epochs from CALLGRIND_FIRST) read by gpxlogger and by each
        of CALLGRIND_VARIANTS at once (`run` with the default config, with always-on, with the store off, and
        `watch`): instructions under valgrind --tool=callgrind, then syscall counts under strace -c -f, then
        CPU time natively, the same slice at the same pace each time; each against gpxlogger's.
        BENCH_VARIANTS picks some by name, BENCH_KEEP=DIR keeps the callgrind files for callgrind_annotate,
        BENCH_PASSES=callgrind runs only the first. BENCH_CACHESIM=1 has callgrind simulate the caches and
        branch predictors too and prints each client's misses per epoch beside gpxlogger's.
  order  the same slice under callgrind for `run`, `run` always-on and `watch`, and `lodestar --help`, with a
        binary that keeps its symbols (bench/function-order.sh builds it): every function of the binary that
        ran, the most instructions first, one mangled name a line, written to OUT, which scripts/build-release
        gives the linker as its symbol ordering file.

usage: daemon.py cpu  LODESTAR_BINARY CAPTURE [RUNS] [SPEED]
       daemon.py callgrind LODESTAR_BINARY CAPTURE [SPEED]
       daemon.py soak LODESTAR_BINARY CAPTURE [HOURS] [SPEED]
       daemon.py order LODESTAR_BINARY_WITH_SYMBOLS CAPTURE OUT
SPEED: times the capture's own pace (gaps over 5 s shortened to 5 s); 0 = as fast as gpsd reads.
Standard library only."""
import datetime, fcntl, os, pty, shlex, shutil, signal, socket, statistics, struct, subprocess, sys, tempfile
import re, termios, time

# The daemon as the comparison with gpxlogger needs it: every fix delivered (always-on), printed once on
# stdout, no receiver commands (the pty has no receiver), its state and status in a scratch directory.
DEFAULT_ARGS = ("run --gpsd {host}:{port} --profile always-on --no-power-control --stdout jsonl --jsonl none"
                " --gpx none --socket none --state-dir {state} --runtime-dir {state}/run")
gpsd = shutil.which("gpsd") or "/usr/sbin/gpsd"
primer = b"$GPTXT,01,01,02,lodestar primer*6A\r\n"
TIMED = {b"RMC": 1, b"GGA": 1, b"GNS": 1, b"ZDA": 1, b"GLL": 5}


def epoch_time(line):
    fields = line.split(b",")
    if len(fields) > 1 and fields[0][-3:] in (b"RMC", b"GGA", b"GNS", b"ZDA") and len(fields[1]) >= 6:
        try:
            return int(fields[1][0:2]) * 3600 + int(fields[1][2:4]) * 60 + float(fields[1][4:])
        except ValueError:
            return None
    return None


def epochs(data):
    """The capture's lines grouped by receiver time of day (s), as (time, bytes)."""
    groups, current, current_time = [], [], None
    for line in data.splitlines(keepends=True):
        stamp = epoch_time(line)
        if stamp is not None and current_time is not None and stamp != current_time and current:
            groups.append((current_time, b"".join(current)))
            current = []
        if stamp is not None:
            current_time = stamp
        current.append(line)
    if current:
        groups.append((current_time, b"".join(current)))
    return groups


def checksummed(body):
    value = 0
    for byte in body[1:]:
        value ^= byte
    return body + b"*%02X\r\n" % value


def shift_sentence(line, offset):
    """One NMEA sentence with its time (and RMC/ZDA date) moved `offset` seconds on; others unchanged."""
    text = line.rstrip(b"\r\n")
    if not text.startswith(b"$") or b"*" not in text:
        return line
    body = text[: text.rindex(b"*")]
    fields = body.split(b",")
    kind = fields[0][-3:]
    index = TIMED.get(kind)
    if index is None or len(fields) <= index or len(fields[index]) < 6:
        return line
    raw = fields[index]
    try:
        tod = int(raw[0:2]) * 3600 + int(raw[2:4]) * 60 + float(raw[4:])
    except ValueError:
        return line
    decimals = len(raw) - 7 if b"." in raw else 0
    date = None
    try:
        if kind == b"RMC" and len(fields) > 9 and len(fields[9]) == 6:
            d = fields[9]
            date = datetime.date(2000 + int(d[4:6]), int(d[2:4]), int(d[0:2]))
        elif kind == b"ZDA" and len(fields) > 4:
            date = datetime.date(int(fields[4]), int(fields[3]), int(fields[2]))
    except ValueError:
        date = None
    moment = datetime.datetime.combine(date or datetime.date(2000, 1, 1), datetime.time()) + \
        datetime.timedelta(seconds=tod + offset)
    seconds = moment.second + moment.microsecond / 1e6
    stamp = b"%02d%02d" % (moment.hour, moment.minute)
    stamp += (b"%0*.*f" % (3 + decimals, decimals, seconds)) if decimals else b"%02d" % int(seconds)
    fields[index] = stamp
    if date is not None and kind == b"RMC":
        fields[9] = b"%02d%02d%02d" % (moment.day, moment.month, moment.year % 100)
    elif date is not None and kind == b"ZDA":
        fields[2], fields[3], fields[4] = b"%02d" % moment.day, b"%02d" % moment.month, b"%04d" % moment.year
    return checksummed(b",".join(fields))


def looped(groups, hours):
    """The capture's epochs repeated until `hours` of receiver time are covered, each loop moved on by the
    capture's span plus one epoch; yields (absolute receiver seconds from the start, bytes)."""
    stamped = [(t, c) for t, c in groups if t is not None]
    first = stamped[0][0]
    relative, day = [], 0.0
    previous = first
    for t, chunk in stamped:
        if t < previous - 43200:
            day += 86400
        previous = t
        relative.append((t + day - first, chunk))
    step = relative[1][0] - relative[0][0] if len(relative) > 1 else 1
    span = relative[-1][0] + step
    loop = 0
    while True:
        offset = loop * span
        for t, chunk in relative:
            if offset + t > hours * 3600:
                return
            if loop == 0:
                yield t, chunk
            else:
                yield offset + t, b"".join(shift_sentence(l, offset) for l in chunk.splitlines(keepends=True))
        loop += 1


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def control(sock_path, command):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock_path)
    s.sendall((command + "\n").encode())
    reply = s.recv(256)
    s.close()
    return reply


def wait_for(what, condition, timeout=30):
    deadline = time.time() + timeout
    while not condition():
        if time.time() > deadline:
            sys.exit(f"timed out waiting for {what}")
        time.sleep(0.01)


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def thread_times(pid):
    """schedstat seconds of each live thread of a process (/proc/PID/schedstat is the main thread's alone)."""
    times = []
    for task in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        try:
            times.append(int(read(f"/proc/{pid}/task/{task}/schedstat").split()[0]) / 1e9)
        except (OSError, ValueError):
            pass
    return times


def wakes(pid):
    """Context switches summed over the live threads (voluntary: the thread slept, on poll or a lock)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            status = read(f"/proc/{pid}/task/{task}/status")
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                total += int(line.split()[1])
    return total


def cpu_figures(pid):
    """(utime s, stime s, schedstat s summed over the live threads) of a process."""
    ticks = read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()
    hz = os.sysconf("SC_CLK_TCK")
    return int(ticks[11]) / hz, int(ticks[12]) / hz, sum(thread_times(pid))


def memory(pid):
    """(VmRSS KiB, VmHWM KiB, private KiB, PSS KiB, private dirty KiB). Private (Private_Clean + Private_Dirty) is
    what the process alone costs; PSS shares each shared library's pages among the processes mapping them; RSS
    counts them whole. Private dirty leaves out the pages the kernel can drop and read again from their file: for
    lodestar that is most of its private memory, its own program text (one process maps the binary)."""
    status = dict(line.split(":", 1) for line in read(f"/proc/{pid}/status").splitlines() if ":" in line)
    rollup = dict(line.split(":", 1) for line in read(f"/proc/{pid}/smaps_rollup").splitlines()[1:] if ":" in line)
    kib = lambda value: int(value.split()[0])
    private = kib(rollup["Private_Clean"]) + kib(rollup["Private_Dirty"])
    return kib(status["VmRSS"]), kib(status["VmHWM"]), private, kib(rollup["Pss"]), kib(rollup["Private_Dirty"])


def connected(pid):
    """Whether the process (or a child: a profiler's wrapper) holds an established TCP connection."""
    inodes, pids = set(), [pid]
    for task in os.listdir(f"/proc/{pid}/task"):
        pids += [int(c) for c in read(f"/proc/{pid}/task/{task}/children").split()]
    def descriptors(p):
        try:
            return os.listdir(f"/proc/{p}/fd")
        except OSError:  # a child that has just ended (strace's first exec)
            return []
    for fd in (f"{p}/fd/{n}" for p in pids for n in descriptors(p)):
        try:
            target = os.readlink(f"/proc/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in read(table).splitlines()[1:]:
            columns = row.split()
            if columns[3] == "01" and columns[9] in inodes:
                return True
    return False


class PrivateGPSD:
    """gpsd on a free port reading a pty that this process writes."""

    def __init__(self, work):
        self.port = free_port()
        self.sock = os.path.join(work, "control.sock")
        self.shm_key = "0x4c53%04x" % (self.port & 0xFFFF)
        self.process = subprocess.Popen(
            [gpsd, "-N", "-n", "-b", "-S", str(self.port), "-F", self.sock, "-s", "38400", "-f", "8N1"],
            env=dict(os.environ, GPSD_SHM_KEY=self.shm_key), stderr=subprocess.DEVNULL)
        wait_for("gpsd's control socket", lambda: os.path.exists(self.sock))
        self.master, self.slave = pty.openpty()
        self.path = os.ttyname(self.slave)
        os.chmod(self.path, 0o666)
        attributes = termios.tcgetattr(self.slave)
        attributes[3] &= ~termios.ECHO
        termios.tcsetattr(self.slave, termios.TCSANOW, attributes)
        watcher = socket.create_connection(("127.0.0.1", self.port))
        watcher.sendall(b'?WATCH={"enable":true,"json":true};\n')
        control(self.sock, "+" + self.path)
        # Prime until gpsd names a driver: it reads the pty from then on and nothing fed later is flushed.
        buffer, deadline = b"", time.time() + 20
        watcher.settimeout(0.05)
        while b'"driver"' not in buffer:
            if time.time() > deadline:
                sys.exit("gpsd did not read the pty")
            os.write(self.master, primer)
            try:
                buffer += watcher.recv(65536)
            except socket.timeout:
                pass
        watcher.close()

    def feed(self, stream, speed, on_epoch=None):
        """Writes (receiver seconds, bytes) epochs at `speed` times their pace; `on_epoch(seconds)` after each."""
        due, previous = time.time(), None
        for stamp, chunk in stream:
            if speed > 0 and stamp is not None:
                if previous is not None:
                    due += min(max(stamp - previous, 0), 5) / speed
                previous = stamp
                delay = due - time.time()
                if delay > 0:
                    time.sleep(delay)
            view = memoryview(chunk)
            while view:
                view = view[os.write(self.master, view):]
            if on_epoch:
                on_epoch(stamp)
        quiet_since = None
        while True:  # until gpsd has read everything: its queue empty for 0.2 s
            waiting = struct.unpack("i", fcntl.ioctl(self.slave, termios.FIONREAD, b"\0\0\0\0"))[0]
            now = time.time()
            if waiting:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since > 0.2:
                break
            time.sleep(0.01)
        control(self.sock, "-" + self.path)

    def stop(self):
        os.close(self.master)
        os.close(self.slave)
        self.process.terminate()
        try:
            self.process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.process.kill()
        subprocess.run(["ipcrm", "-M", self.shm_key], stderr=subprocess.DEVNULL)


def lodestar_command(binary, port, state="STATE"):
    # LODESTAR_ARGS='watch --gpsd {host}:{port} --format jsonl' measures watch, the same live path.
    # The state directory is inside the run's scratch folder, removed with it.
    args = os.environ.get("LODESTAR_ARGS", DEFAULT_ARGS).format(host="127.0.0.1", port=port, state=state)
    return [binary] + shlex.split(args)


def settled(pids, outputs, quiet=0.5, timeout=60, budget=0.005):
    """Waits until, over `quiet` seconds, no output grew and no process used more than `budget` s of CPU (an
    idle client still wakes to poll)."""
    def snapshot():
        return [cpu_figures(p)[2] for p in pids], [os.path.getsize(o) for o in outputs]
    deadline = time.time() + timeout
    last = snapshot()
    while True:
        time.sleep(quiet)
        now = snapshot()
        if now[1] == last[1] and all(b - a < budget for a, b in zip(last[0], now[0])):
            return
        if time.time() > deadline:
            sys.exit("the clients did not settle")
        last = now


def start_clients(commands, work, in_turn=False):
    """Starts every client and waits until each is connected to gpsd. in_turn: each one connected before the
    next starts, in the dict's order, so the order gpsd sends to them is known (see cpu)."""
    clients, outputs = {}, {}
    for name, command in commands.items():
        out, err = os.path.join(work, name + ".out"), os.path.join(work, name + ".err")
        outputs[name] = (out, err)
        clients[name] = process = subprocess.Popen(command, stdout=open(out, "wb"), stderr=open(err, "wb"))
        if in_turn:
            wait_for(f"{name} to connect to gpsd", lambda: process.poll() is None and connected(process.pid))
            time.sleep(0.5)
    for name, process in clients.items():
        wait_for(f"{name} to connect to gpsd", lambda: process.poll() is None and connected(process.pid))
    time.sleep(0.5)  # the ?WATCH sent after connecting
    for name, process in clients.items():
        if process.poll() is not None:
            sys.exit(f"{name} exited early: {read(outputs[name][1])}")
    return clients, outputs


def stop(clients):
    for process in clients.values():
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()


def cpu_run(binary, groups, speed, first="gpxlogger"):
    work = tempfile.mkdtemp(prefix="lodestar-bench-")
    os.chmod(work, 0o755)
    daemon = PrivateGPSD(work)
    try:
        commands = {"lodestar": lodestar_command(binary, daemon.port, os.path.join(work, "state")),
                    "gpxlogger": [os.environ.get("GPXLOGGER", "gpxlogger"), "-e", "sockets", "127.0.0.1:%d" % daemon.port]}
        commands = {name: commands[name] for name in sorted(commands, key=lambda name: name != first)}
        clients, outputs = start_clients(commands, work, in_turn=True)
        daemon.feed(groups, speed)
        settled([p.pid for p in clients.values()], [o for o, _ in outputs.values()])
        figures = {name: cpu_figures(p.pid) + memory(p.pid) + (wakes(p.pid),) for name, p in clients.items()}
        if os.environ.get("BENCH_THREADS"):  # where lodestar's time went, thread by thread
            print("    lodestar threads (schedstat s): "
                  + ", ".join(f"{t:.3f}" for t in thread_times(clients["lodestar"].pid)))
        stop(clients)
        if os.environ.get("BENCH_KEEP"):  # keep the outputs (to compare two builds' lines)
            for name, (out, _) in outputs.items():
                shutil.copy(out, os.path.join(os.environ["BENCH_KEEP"], name + ".out"))
        lines = read(outputs["lodestar"][0]).count("\n")
        points = read(outputs["gpxlogger"][0]).count("<trkpt")
        return figures, lines, points
    finally:
        daemon.stop()
        shutil.rmtree(work, ignore_errors=True)


def cpu(binary, capture, runs, speed):
    groups = epochs(open(capture, "rb").read())
    print(f"capture: {capture} ({os.path.getsize(capture)} bytes, {len(groups)} epochs) at {speed:g}x its pace")
    print(f"lodestar: {' '.join(lodestar_command(binary, 'PORT')[1:])}")
    print(f"{'run':>3} {'client':10} {'user s':>7} {'sys s':>7} {'u+s s':>7} {'sched s':>8} {'HWM KiB':>8} {'priv KiB':>8} {'PSS KiB':>8} {'dirty KiB':>9} {'switches':>8}")
    ratios, ticks_ratios = [], []
    by_first = {"lodestar": [], "gpxlogger": []}
    for run in range(1, runs + 1):
        # gpsd writes each report to its clients in the order they connected. On two cores the first one
        # woken runs at once beside gpsd, which is still in the kernel sending to the other, and spins on the
        # same locks (perf: the socket lock in tcp_recvmsg, the wait queue in poll_freewait); the second runs
        # after gpsd. gpxlogger used 0.57 s first and 0.40 s second (2026-12-04): so the order alternates.
        first = "gpxlogger" if run % 2 else "lodestar"
        figures, lines, points = cpu_run(binary, groups, speed, first)
        for name in ("lodestar", "gpxlogger"):
            user, system, sched, _, hwm, private, pss, dirty, switches = figures[name]
            print(f"{run:3} {name:10} {user:7.2f} {system:7.2f} {user + system:7.2f} {sched:8.3f} {hwm:8d}"
                  f" {private:8d} {pss:8d} {dirty:9d} {switches:8d}")
        ratio = figures["lodestar"][2] / figures["gpxlogger"][2]
        ticks = (figures["lodestar"][0] + figures["lodestar"][1]) / max(0.01, figures["gpxlogger"][0] + figures["gpxlogger"][1])
        ratios.append(ratio)
        ticks_ratios.append(ticks)
        by_first[first].append(ratio)
        print(f"    lodestar/gpxlogger CPU: {ratio:.2f}x (schedstat), {ticks:.2f}x (utime+stime); "
              f"{first} connected first; lodestar wrote {lines} lines, gpxlogger {points} track points")
    print(f"median lodestar/gpxlogger CPU: {statistics.median(ratios):.2f}x schedstat, "
          f"{statistics.median(ticks_ratios):.2f}x utime+stime (target <= 1.0x); "
          + ", ".join(f"{statistics.median(r):.2f}x with {name} first ({len(r)} runs)"
                      for name, r in by_first.items() if r))


def soak(binary, capture, hours, speed):
    groups = epochs(open(capture, "rb").read())
    work = tempfile.mkdtemp(prefix="lodestar-soak-")
    os.chmod(work, 0o755)
    daemon = PrivateGPSD(work)
    samples = []
    try:
        clients, outputs = start_clients({"lodestar": lodestar_command(binary, daemon.port, os.path.join(work, "state"))}, work)
        pid = clients["lodestar"].pid
        started = time.time()
        next_hour = [1]

        def on_epoch(stamp):
            if stamp is not None and stamp >= next_hour[0] * 3600:
                samples.append((next_hour[0], time.time() - started) + memory(pid))
                next_hour[0] += 1
        print(f"soak: {capture} looped over {hours:g} h of receiver time at {speed:g}x; "
              f"lodestar: {' '.join(lodestar_command(binary, 'PORT')[1:])}")
        daemon.feed(looped(groups, hours), speed, on_epoch)
        settled([pid], [outputs["lodestar"][0]])
        samples.append(("end", time.time() - started) + memory(pid))
        user, system, sched = cpu_figures(pid)
        stop(clients)
        lines = read(outputs["lodestar"][0]).count("\n")
    finally:
        daemon.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'hour':>5} {'wall s':>7} {'VmRSS KiB':>10} {'VmHWM KiB':>10} {'private KiB':>12} {'PSS KiB':>8} "
          f"{'private dirty KiB':>18}")
    for hour, wall, rss, hwm, private, pss, dirty in samples:
        print(f"{hour:>5} {wall:7.1f} {rss:10d} {hwm:10d} {private:12d} {pss:8d} {dirty:18d}")
    first = next(s for s in samples if s[0] == 1)
    last = samples[-1]
    growth = (last[2] - first[2]) / first[2] * 100
    private_growth = (last[4] - first[4]) / first[4] * 100
    print(f"lodestar wrote {lines} lines, CPU {user + system:.2f} s (schedstat {sched:.2f} s)")
    print(f"peak RSS (VmHWM) {last[3] / 1024:.2f} MiB; at the end private {last[4] / 1024:.2f} MiB, PSS "
          f"{last[5] / 1024:.2f} MiB, private dirty {last[6] / 1024:.2f} MiB, RSS {last[2] / 1024:.2f} MiB; "
          f"growth hour 1 -> end: RSS {growth:+.1f} %, private {private_growth:+.1f} % (target < 5 %)")


# `callgrind` mode: each lodestar command next to gpxlogger on one stream. The run variants share a config file
# that is the default config but for where things go (a private state and runtime directory, this gpsd, no
# socket group, which a bench machine may not have) and no receiver commands, as DEFAULT_ARGS: so the store,
# the jsonl file, the daily GPX and the socket are on and the profile is the default one (car).
CALLGRIND_VARIANTS = {
    "run": "run --config {config}",
    "run always-on": "run --config {config} --profile always-on",
    "run always-on, store off": "run --config {config} --profile always-on --set store=false",
    "watch": "watch --gpsd {host}:{port} --format jsonl",
}


def variant_commands(binary, port, work):
    """{name: (command, state directory or None)} for CALLGRIND_VARIANTS (or the names in BENCH_VARIANTS,
    comma-separated), each run with its own state directory and config file."""
    chosen = [v.strip() for v in os.environ.get("BENCH_VARIANTS", "").split(",") if v.strip()] or list(CALLGRIND_VARIANTS)
    commands = {}
    for index, name in enumerate(chosen):
        state = os.path.join(work, f"state{index}")
        config = os.path.join(work, f"lodestar{index}.json")
        with open(config, "w") as f:
            f.write('{"stateDirectory": "%s", "runtimeDirectory": "%s/run", "gpsd": {"host": "127.0.0.1", '
                    '"port": %d}, "receiver": {"powerControl": false}, "outputs": {"socket": {"group": null}}}\n'
                    % (state, state, port))
        args = CALLGRIND_VARIANTS[name].format(config=config, host="127.0.0.1", port=port)
        commands[name] = ([binary] + shlex.split(args), state if name.startswith("run") else None)
    return commands


def callgrind_slice(capture):
    """The epochs callgrind mode feeds: CALLGRIND_EPOCHS (600, 20 min of the 0.5 Hz drive) from
    CALLGRIND_FIRST (0)."""
    groups = epochs(open(capture, "rb").read())
    first = int(os.environ.get("CALLGRIND_FIRST", "0"))
    return groups[first:first + int(os.environ.get("CALLGRIND_EPOCHS", "600"))]


def strace_counts(path):
    """{syscall: calls, "errors:" + syscall: errors} from an `strace -c` table."""
    counts = {}
    for row in read(path).splitlines():
        columns = row.split()
        if len(columns) >= 5 and columns[0][0].isdigit() and not columns[-1].startswith("total"):
            calls = int(columns[3])
            errors = int(columns[4]) if len(columns) == 6 else 0
            counts[columns[-1]] = calls
            if errors:
                counts["errors:" + columns[-1]] = errors
    return counts


def progress(text):
    if os.environ.get("BENCH_VERBOSE"):
        print(time.strftime("%H:%M:%S"), text, file=sys.stderr, flush=True)


def tool_run(binary, groups, speed, tool):
    """One gpsd stream read by gpxlogger and every variant, each under `tool` (callgrind, strace or None);
    {name: (instructions or CPU figures, strace counts or None, locations written)}."""
    work = tempfile.mkdtemp(prefix="lodestar-bench-")
    os.chmod(work, 0o755)
    daemon = PrivateGPSD(work)
    try:
        variants = variant_commands(binary, daemon.port, work)
        variants["gpxlogger"] = ([os.environ.get("GPXLOGGER", "gpxlogger"), "-e", "sockets",
                                  "127.0.0.1:%d" % daemon.port], None)
        commands = {}
        for index, (name, (command, _)) in enumerate(variants.items()):
            if tool == "callgrind":
                command = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={work}/callgrind.{index}"] \
                    + (["--cache-sim=yes", "--branch-sim=yes"] if os.environ.get("BENCH_CACHESIM") else []) + command
            elif tool == "strace":
                command = ["strace", "-f", "-c", "-o", f"{work}/strace.{index}"] + command
            commands[name] = command
        # gpxlogger gives up after 5 s without a report: it starts once the slower lodestars are connected.
        clients, outputs = start_clients({n: c for n, c in commands.items() if n != "gpxlogger"}, work)
        more, more_outputs = start_clients({"gpxlogger": commands["gpxlogger"]}, work)
        clients.update(more)
        outputs.update(more_outputs)
        progress(f"{tool or 'native'}: clients connected, feeding {len(groups)} epochs")
        daemon.feed(groups, speed)
        progress(f"{tool or 'native'}: fed; waiting for the clients to settle")
        # Under valgrind an idle client's tick costs more than 5 ms: settled on outputs and a 50 ms budget.
        settled([p.pid for p in clients.values()], [o for o, _ in outputs.values()], quiet=1.0,
                budget=0.05 if tool else 0.005, timeout=600)
        figures = {name: cpu_figures(p.pid) for name, p in clients.items()} if tool is None else {}
        for name, process in clients.items():
            # strace passes no signal on: the traced command (its child) is stopped, strace then ends.
            children = [int(c) for t in os.listdir(f"/proc/{process.pid}/task")
                        for c in read(f"/proc/{process.pid}/task/{t}/children").split()]
            for pid in (children if tool == "strace" else [process.pid]):
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        progress(f"{tool or 'native'}: settled; stopping the clients")
        for process in clients.values():
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
        results = {}
        for index, (name, (_, state)) in enumerate(variants.items()):
            if name == "gpxlogger":
                written = read(outputs[name][0]).count("<trkpt")
            elif state is None:
                written = read(outputs[name][0]).count('"type":"location"')
            else:
                jsonl = os.path.join(state, "track", "locations.jsonl")
                written = read(jsonl).count('"type":"location"') if os.path.exists(jsonl) else 0
            if tool == "callgrind":
                found = re.findall(r"Collected : (\d+)", read(outputs[name][1]))
                results[name] = (int(found[-1]) if found else 0, written)
                if os.environ.get("BENCH_CACHESIM") and os.path.exists(f"{work}/callgrind.{index}"):
                    CACHE_FIGURES[name] = cache_figures(f"{work}/callgrind.{index}")
                if os.environ.get("BENCH_KEEP") and os.path.exists(f"{work}/callgrind.{index}"):
                    shutil.copy(f"{work}/callgrind.{index}", os.path.join(
                        os.environ["BENCH_KEEP"], "callgrind." + re.sub(r"[^a-z]+", "-", name)))
            elif tool == "strace":
                results[name] = (strace_counts(f"{work}/strace.{index}"), written)
            else:
                results[name] = (figures[name], written)
        return results
    finally:
        daemon.stop()
        shutil.rmtree(work, ignore_errors=True)


# BENCH_CACHESIM=1: callgrind also simulates the caches and branch predictors; each client's misses, by name.
CACHE_FIGURES = {}


def cache_figures(path):
    """The events of a callgrind file's summary line, by name (Ir, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw, Bcm, Bim)."""
    names, values = [], []
    with open(path) as file:
        for line in file:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith("summary:"):
                values = [int(v) for v in line.split()[1:]]
    return dict(zip(names, values))


def print_cache_figures(epochs):
    """Misses per epoch of each client under BENCH_CACHESIM, and their ratio to gpxlogger's: instructions alone
    do not say what a cycle costs."""
    if not CACHE_FIGURES:
        return
    columns = (("I1 misses", ("I1mr",)), ("D1 read", ("D1mr",)), ("D1 write", ("D1mw",)),
               ("LL misses", ("ILmr", "DLmr", "DLmw")), ("mispredicts", ("Bcm", "Bim")))
    base = CACHE_FIGURES.get("gpxlogger", {})
    print(f"{'per epoch (cache-sim)':26} " + " ".join(f"{title:>18}" for title, _ in columns))
    for name, figures in CACHE_FIGURES.items():
        cells = []
        for _, events in columns:
            value = sum(figures.get(e, 0) for e in events)
            ratio = value / max(1, sum(base.get(e, 0) for e in events))
            cells.append(f"{value / max(1, epochs):>10,.0f} ({ratio:4.1f}x)")
        print(f"{name:26} " + " ".join(f"{c:>18}" for c in cells))


def callgrind(binary, capture, speed):
    """Instructions (callgrind's Ir) of each variant and of gpxlogger on one stream, syscall counts (strace -c)
    on a second one, CPU time natively on a third: the same slice of the capture at the same pace each time."""
    groups = callgrind_slice(capture)
    span = ((groups[-1][0] or 0) - (groups[0][0] or 0)) % 86400  # the drive passes UTC midnight
    print(f"capture: {capture}, epochs {os.environ.get('CALLGRIND_FIRST', '0')}+{len(groups)} "
          f"({span / 60:.0f} min of receiver time) at {speed:g}x its pace")
    # BENCH_PASSES=callgrind skips the strace and native runs (CPU is then shown as 0).
    passes = os.environ.get("BENCH_PASSES", "callgrind,strace,native").split(",")
    instructions = tool_run(binary, groups, speed, "callgrind")
    syscalls = tool_run(binary, groups, speed, "strace") if shutil.which("strace") and "strace" in passes else {}
    none = {name: ((0, 0, 0), 0) for name in instructions}
    cpu_times = tool_run(binary, groups, speed, None) if "native" in passes else none
    base_ir = max(1, instructions["gpxlogger"][0])
    base_cpu = max(1e-9, cpu_times["gpxlogger"][0][2])
    shown = ("poll", "ppoll", "pselect6", "select", "read", "recvfrom", "write", "writev", "pwrite64", "fdatasync", "fsync", "futex")
    print(f"{'client':26} {'instructions':>14} {'ratio':>6} {'per loc':>9} {'CPU s':>7} {'ratio':>6} {'locs':>5}  syscalls (strace -c -f)")
    for name in instructions:
        ir, written = instructions[name]
        sched = cpu_times[name][0][2]
        counts = syscalls.get(name, ({}, 0))[0]
        calls = " ".join(f"{c} {counts[c]}" + (f" ({counts['errors:' + c]} err)" if "errors:" + c in counts else "")
                         for c in shown if c in counts)
        print(f"{name:26} {ir:14,} {ir / base_ir:5.2f}x {ir // max(1, written):9,} {sched:7.3f} "
              f"{sched / base_cpu:5.2f}x {written:5}  {calls}")
    print_cache_figures(len(groups))
    print(f"lodestar: {binary}; instructions from valgrind --tool=callgrind (start-up and exit included); "
          f"CPU is schedstat over the live threads, natively, in a run of its own")


def startup(binary, runs):
    """`lodestar --help` next to `gpspipe --help`, interleaved: median wall time of each, and the instructions
    each executes under callgrind (repeatable on a noisy machine), the dynamic loader's share included."""
    gpspipe = shutil.which("gpspipe") or "/usr/bin/gpspipe"
    commands = {"lodestar --help": [binary, "--help"], "gpspipe --help": [gpspipe, "--help"]}
    times = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - start)
    instructions = {}
    for name, command in commands.items():
        out = tempfile.mktemp(prefix="lodestar-callgrind-")
        result = subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}"] + command,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        found = re.search(r"Collected : (\d+)", result.stderr)
        instructions[name] = int(found.group(1)) if found else 0
        if os.path.exists(out):
            os.remove(out)
    for name in commands:
        print(f"{name:16} median {statistics.median(times[name]) * 1000:6.2f} ms over {runs} runs, "
              f"{instructions[name]:>11,} instructions (callgrind)")
    ratio = statistics.median(times["lodestar --help"]) / statistics.median(times["gpspipe --help"])
    print(f"lodestar/gpspipe start-up: {ratio:.2f}x wall, "
          f"{instructions['lodestar --help'] / max(1, instructions['gpspipe --help']):.2f}x instructions")


def function_order(binary, capture, out):
    """Writes OUT: the binary's functions that ran in the callgrind slice (`run`, `run` always-on, `watch`) and
    in `--help`, by instructions summed over those runs, most first. Laid out in that order, the code an epoch
    runs shares a few dozen pages instead of being spread over the whole binary, which costs cache and TLB
    misses at each wake and resident pages (the kernel maps file pages 64 KiB around each fault)."""
    keep = tempfile.mkdtemp(prefix="lodestar-order-")
    try:
        os.environ["BENCH_KEEP"] = keep
        os.environ["BENCH_VARIANTS"] = "run,run always-on,watch"
        tool_run(binary, callgrind_slice(capture), 10, "callgrind")
        subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={keep}/callgrind.help",
                        binary, "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        instructions = {}
        for name in sorted(os.listdir(keep)):
            if name == "callgrind.gpxlogger":
                continue
            table = subprocess.run(["callgrind_annotate", "--threshold=100", os.path.join(keep, name)],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout
            for line in table.splitlines():
                # "  1,234 (0.01%)  FILE:FUNCTION [OBJECT]", FUNCTION with "'2" for a recursion level.
                found = re.match(r"\s*([\d,]+) .*?\s(\S+) \[(\S+)\]$", line)
                if not found or os.path.realpath(found.group(3)) != os.path.realpath(binary):
                    continue
                function = re.sub(r"'\d+$", "", found.group(2).split(":", 1)[-1])
                instructions[function] = instructions.get(function, 0) + int(found.group(1).replace(",", ""))
        if not instructions:
            sys.exit(f"order: no function of {binary} was profiled (a binary without symbols?)")
        with open(out, "w") as f:
            for function in sorted(instructions, key=lambda n: (-instructions[n], n)):
                f.write(function + "\n")
        print(f"order: {len(instructions)} functions, {sum(instructions.values()):,} instructions, written to {out}")
    finally:
        shutil.rmtree(keep, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "order":
        function_order(*sys.argv[2:5])
        sys.exit(0)
    if len(sys.argv) >= 3 and sys.argv[1] == "startup":
        startup(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 50)
        sys.exit(0)
    if len(sys.argv) >= 4 and sys.argv[1] == "callgrind":
        callgrind(sys.argv[2], sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 else 10)
        sys.exit(0)
    if len(sys.argv) < 4 or sys.argv[1] not in ("cpu", "soak"):
        sys.exit(__doc__)
    mode, binary, capture = sys.argv[1:4]
    if mode == "cpu":
        cpu(binary, capture, int(sys.argv[4]) if len(sys.argv) > 4 else 3,
            float(sys.argv[5]) if len(sys.argv) > 5 else 200)
    else:
        soak(binary, capture, float(sys.argv[4]) if len(sys.argv) > 4 else 25,
             float(sys.argv[5]) if len(sys.argv) > 5 else 2000)
