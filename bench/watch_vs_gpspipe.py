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
import os, shutil, signal, statistics, subprocess, sys, tempfile

lodestar, capture = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
speed = float(sys.argv[4]) if len(sys.argv) > 4 else 200


sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import PrivateGPSD, epochs, read, wait_for  # noqa: E402  (the private gpsd and feed, shared)


def one_run(work):
    daemon = PrivateGPSD(work)
    try:
        outputs = {name: (os.path.join(work, name + ".out"), os.path.join(work, name + ".err"))
                   for name in ("lodestar", "gpspipe")}
        commands = {"lodestar": [lodestar, "watch", "--gpsd", "127.0.0.1:%d" % daemon.port, "--format", "jsonl"],
                    "gpspipe": ["gpspipe", "-w", "127.0.0.1:%d" % daemon.port]}
        clients = {}
        for name, command in commands.items():
            out, err = outputs[name]
            clients[name] = subprocess.Popen(command, stdout=open(out, "wb"), stderr=open(err, "wb"))
        wait_for("lodestar to watch", lambda: "watching gpsd" in read(outputs["lodestar"][1]))
        wait_for("gpspipe to watch", lambda: '"class":"WATCH"' in read(outputs["gpspipe"][0]))

        data = open(capture, "rb").read()
        daemon.feed(epochs(data) if speed > 0 else [(None, data)], speed)
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
        return figures, fixes, tpvs
    finally:
        daemon.stop()


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
