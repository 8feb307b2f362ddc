#!/usr/bin/python3
"""Benchmark (not a test): CPU time and peak RSS of `lodestar watch` next to `gpspipe -w`, both reading one
private gpsd while it decodes a capture fed into a pty as fast as gpsd reads it. Figures are read from /proc
just before each client is stopped: CPU time from schedstat (nanoseconds; rusage and /usr/bin/time round to
10 ms, as much as the whole difference here), peak RSS from VmHWM (rusage's maxrss would count the Python
image a forked child starts with). Standard library only.

The capture is written epoch by epoch at SPEED times its recorded pace (gaps over 5 s shortened to 5 s), as a
receiver would deliver it, so each client wakes once per epoch as it would on a Pi. Fed as fast as gpsd
reads (SPEED 0), the figures depend mostly on how the scheduler batches gpsd's writes and vary 2x run to run.

usage: watch_vs_gpspipe.py LODESTAR_BINARY CAPTURE [RUNS] [SPEED]"""
import os, pty, shutil, signal, socket, statistics, struct, subprocess, sys, tempfile, termios, fcntl, time

lodestar, capture = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
speed = float(sys.argv[4]) if len(sys.argv) > 4 else 200


def epochs(data):
    """The capture's lines grouped by receiver time (NMEA RMC/GGA/GNS/ZDA field 1), with that time in s."""
    groups, current, current_time = [], [], None
    for line in data.splitlines(keepends=True):
        fields = line.split(b",")
        stamp = None
        if len(fields) > 1 and fields[0][-3:] in (b"RMC", b"GGA", b"GNS", b"ZDA") and len(fields[1]) >= 6:
            try:
                stamp = int(fields[1][0:2]) * 3600 + int(fields[1][2:4]) * 60 + float(fields[1][4:])
            except ValueError:
                stamp = None
        if stamp is not None and current_time is not None and stamp != current_time and current:
            groups.append((current_time, b"".join(current)))
            current = []
        if stamp is not None:
            current_time = stamp
        current.append(line)
    if current:
        groups.append((current_time, b"".join(current)))
    return groups
gpsd = shutil.which("gpsd") or "/usr/sbin/gpsd"
primer = b"$GPTXT,01,01,02,lodestar primer*6A\r\n"


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


def one_run(work):
    port = free_port()
    sock = os.path.join(work, "control.sock")
    shm_key = "0x4c53%04x" % port
    daemon = subprocess.Popen([gpsd, "-N", "-n", "-b", "-S", str(port), "-F", sock, "-s", "38400", "-f", "8N1"],
                              env=dict(os.environ, GPSD_SHM_KEY=shm_key), stderr=subprocess.DEVNULL)
    try:
        wait_for("gpsd's control socket", lambda: os.path.exists(sock))
        master, slave = pty.openpty()
        path = os.ttyname(slave)
        os.chmod(path, 0o666)
        attributes = termios.tcgetattr(slave)
        attributes[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, attributes)
        watcher = socket.create_connection(("127.0.0.1", port))
        watcher.sendall(b'?WATCH={"enable":true,"json":true};\n')
        control(sock, "+" + path)
        # Prime until gpsd names a driver: it reads the pty from then on and nothing fed later is flushed.
        buffer, deadline = b"", time.time() + 20
        watcher.settimeout(0.05)
        while b'"driver"' not in buffer:
            if time.time() > deadline:
                sys.exit("gpsd did not read the pty")
            os.write(master, primer)
            try:
                buffer += watcher.recv(65536)
            except socket.timeout:
                pass
        watcher.close()

        outputs = {name: (os.path.join(work, name + ".out"), os.path.join(work, name + ".err"))
                   for name in ("lodestar", "gpspipe")}
        commands = {"lodestar": [lodestar, "watch", "--host", "127.0.0.1", "--port", str(port), "--format", "jsonl"],
                    "gpspipe": ["gpspipe", "-w", "127.0.0.1:%d" % port]}
        clients = {}
        for name, command in commands.items():
            out, err = outputs[name]
            clients[name] = subprocess.Popen(command, stdout=open(out, "wb"), stderr=open(err, "wb"))
        wait_for("lodestar to watch", lambda: "watching gpsd" in read(outputs["lodestar"][1]))
        wait_for("gpspipe to watch", lambda: '"class":"WATCH"' in read(outputs["gpspipe"][0]))

        data = open(capture, "rb").read()
        if speed > 0:
            due, previous = time.time(), None
            for stamp, chunk in epochs(data):
                if stamp is not None:
                    if previous is not None:
                        gap = stamp - previous
                        gap += 86400 if gap < -43200 else 0
                        due += min(max(gap, 0), 5) / speed
                    previous = stamp
                    delay = due - time.time()
                    if delay > 0:
                        time.sleep(delay)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(master, view):]
        else:
            view = memoryview(data)
            while view:
                view = view[os.write(master, view[:4096]):]
        quiet_since = None
        while True:  # until gpsd has read everything: its queue empty for 0.2 s
            waiting = struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\0\0\0\0"))[0]
            now = time.time()
            if waiting:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since > 0.2:
                break
            time.sleep(0.01)
        control(sock, "-" + path)
        wait_for("gpspipe to see the device close", lambda: '"activated":0' in read(outputs["gpspipe"][0]))
        wait_for("lodestar to see the device close", lambda: "closed" in read(outputs["lodestar"][1]))
        figures = {}
        for name, process in clients.items():
            cpu_ns = int(read(f"/proc/{process.pid}/schedstat").split()[0])
            status = read(f"/proc/{process.pid}/status")
            hwm = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
            ticks = read(f"/proc/{process.pid}/stat").rsplit(")", 1)[1].split()
            hz = os.sysconf("SC_CLK_TCK")
            figures[name] = (int(ticks[11]) / hz, int(ticks[12]) / hz, cpu_ns / 1e9, hwm)
            process.send_signal(signal.SIGTERM)
            process.wait()
        fixes = read(outputs["lodestar"][0]).count("\n")
        tpvs = read(outputs["gpspipe"][0]).count('"class":"TPV"')
        os.close(master)
        os.close(slave)
        return figures, fixes, tpvs
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=3)
        except subprocess.TimeoutExpired:
            daemon.kill()
        subprocess.run(["ipcrm", "-M", shm_key], stderr=subprocess.DEVNULL)


results = []
for _ in range(runs):
    work = tempfile.mkdtemp(prefix="lodestar-bench-")
    os.chmod(work, 0o755)
    try:
        results.append(one_run(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)

print(f"capture: {capture} ({os.path.getsize(capture)} bytes) at {speed:g}x its pace, {runs} runs, medians")
print(f"{'client':10} {'user s':>8} {'sys s':>8} {'cpu s':>8} {'peak RSS KB':>12}   (user/sys in 10 ms ticks)")
medians = {}
for name in ("lodestar", "gpspipe"):
    user = statistics.median(r[0][name][0] for r in results)
    system = statistics.median(r[0][name][1] for r in results)
    cpu = statistics.median(r[0][name][2] for r in results)
    rss = int(statistics.median(r[0][name][3] for r in results))
    medians[name] = (cpu, rss)
    print(f"{name:10} {user:8.3f} {system:8.3f} {cpu:8.3f} {rss:12d}")
print(f"lodestar/gpspipe CPU: {medians['lodestar'][0] / medians['gpspipe'][0]:.2f}x (target <= 1.5x); "
      f"lodestar peak RSS {medians['lodestar'][1] / 1024:.2f} MiB (target <= 8 MB)")
print(f"lodestar printed {results[-1][1]} fixes; gpspipe received {results[-1][2]} TPV reports")
