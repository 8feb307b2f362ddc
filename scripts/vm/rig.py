#!/usr/bin/env python3
"""The host side of scripts/vm-test (standard library only).

    rig.py run --run-dir DIR --kernel F --initrd F --disk run.qcow2 --payload payload.img
               --emulator CMD --profile NAME --capture FILE [--connection usb|uart] [--timeout S]
               [--boot-timeout S]
    rig.py stand-in-emulator --profile NAME --capture FILE [--speed N] [--connection usb|uart]

`run` starts the emulated receiver and qemu, and serves the scenario's requests on the control channel
(a virtio-serial port, /dev/virtio-ports/rig in the guest), one line each way:

    hello TEXT          the scenario started (logged with the time since qemu started)
    plug | unplug       connect to / close qemu's usb-serial socket: the guest's /dev/ttyUSB0 appears / goes.
                        While plugged, bytes are bridged both ways to the emulator's pty.
    emulator-report     answer with the emulator's JSON report line (it prints one on SIGUSR1)
    swap PERSONALITY    unplug, stop the emulator, start it again as another receiver (its --personality,
                        e.g. mtk3339) on the same capture and cable, and plug it in
    log TEXT            print TEXT
    result NAME pass|fail DETAIL
    reboot-expected     the guest is about to reboot: qemu (-no-reboot) exits, and is started again on the same
                        overlay, the receiver still plugged in
    power-cut           a power cut: qemu is killed (SIGKILL) 0 to 3 s after the answer, at a random point of
                        what the guest does, so whatever the guest had not synced is lost; then it is started
                        again on the same overlay, as after a reboot
    keep TEXT           keeps TEXT for the next boot (what it cannot write to its own disk without syncing it)
    kept                answers "ok TEXT" with what was kept last, "ok" when nothing was
    done                the scenario is over; qemu is left to power off

Each request gets one answer line, "ok ..." or "error ...". The emulator is started as
`CMD --profile NAME --capture FILE --speed 1 --connection usb|uart`, prints "device PATH" first, a JSON report
on SIGUSR1, and a last one on SIGTERM (logged at the end). The exit status is 0 when results came, none
failed and `done` came; 1 otherwise (a timeout, qemu gone early); 128+N after signal N. qemu and the emulator
are killed on every way out.

A boot that has not said hello within --boot-timeout seconds (default 240; a boot under TCG says it in about
20 s) is killed and started again, twice at most: qemu under TCG has been seen to stop for good at SeaBIOS's
"Booting from ROM...", before the guest's kernel ran, and a second start boots.

`stand-in-emulator` is a plain NMEA receiver for the rig's own checks, used when the project's
receiver-emulator is not built: it plays a raw NMEA log's sentences on a new pty, one fix a second, prints
"device PATH" first, keeps what is written to it, and prints a JSON report on SIGUSR1 and SIGTERM.
"""
import argparse
import json
import os
import random
import select
import selectors
import shlex
import signal
import socket
import subprocess
import sys
import time
import tty


class Stop(Exception):
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def kill(process, grace=0.5):
    """SIGTERM, then SIGKILL after `grace` seconds; the whole process group (each child has its own)."""
    if process is None or process.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            pass


class Rig:
    def __init__(self, args):
        self.args = args
        self.run_dir = args.run_dir
        self.ctl_path = os.path.join(self.run_dir, "ctl.sock")
        self.gps_path = os.path.join(self.run_dir, "gps.sock")
        self.log_file = open(os.path.join(self.run_dir, "rig.log"), "a", buffering=1)
        self.console = open(os.path.join(self.run_dir, "console.log"), "ab")
        self.selector = selectors.DefaultSelector()
        self.start = time.monotonic()
        self.qemu = None
        self.qemu_started = None
        self.boots = 0
        self.hello_seen = False
        self.boot_retries = 0
        self.emulator = None
        self.emulator_lines = []
        self.emulator_buffer = b""
        self.pty = None
        self.ctl = None
        self.ctl_buffer = b""
        self.gps = None
        self.plugged = False
        self.reboot_expected = False
        self.cut_at = None
        self.kept = ""
        self.done = False
        self.done_at = None
        self.results = []
        self.counters = {"to_guest": 0, "from_guest": 0, "dropped": 0, "from_guest_dropped": 0}
        # What the guest wrote to the receiver, as it arrived: gpsd's probes and Lodestar's commands.
        self.from_guest_log = open(os.path.join(self.run_dir, "from-guest.log"), "a", buffering=1)

    # -- output -------------------------------------------------------------------------------------------
    def say(self, text):
        line = "[%7.1fs] %s" % (time.monotonic() - self.start, text)
        print(line, flush=True)
        self.log_file.write(line + "\n")

    # -- the emulator ---------------------------------------------------------------------------------------
    def start_emulator(self, personality=None):
        a = self.args
        command = shlex.split(a.emulator) + ["--profile", a.profile, "--capture", a.capture,
                                             "--speed", "1", "--connection", a.connection]
        if personality:
            command += ["--personality", personality]
        self.emulator_lines, self.emulator_buffer = [], b""
        self.say("emulator: " + " ".join(shlex.quote(c) for c in command))
        errors = open(os.path.join(self.run_dir, "emulator.log"), "ab")
        self.emulator = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=errors, start_new_session=True)
        os.set_blocking(self.emulator.stdout.fileno(), False)
        deadline = time.monotonic() + 60
        while not self.emulator_lines:
            if self.emulator.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the emulator printed no 'device PATH' line (emulator.log)")
            self.read_emulator(wait=0.2)
        first = self.emulator_lines.pop(0)
        if not first.startswith("device "):
            raise RuntimeError("the emulator's first line is not 'device PATH': %r" % first)
        path = first.split(" ", 1)[1].strip()
        self.pty = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self.pty)  # no echo, no CR/LF translation: the bytes are the receiver's
        # Always read, plugged or not: an unplugged receiver's output is lost, and the emulator never blocks.
        self.selector.register(self.pty, selectors.EVENT_READ, "pty")
        self.selector.register(self.emulator.stdout, selectors.EVENT_READ, "emulator")
        self.say("emulator: receiver on %s" % path)

    def read_emulator(self, wait=0.0):
        """Reads what the emulator printed; b"" at its end, None when nothing came."""
        fd = self.emulator.stdout.fileno()
        if wait:
            select.select([fd], [], [], wait)
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return None
        except (OSError, ValueError):
            return b""
        if data:
            self.emulator_buffer += data
            *lines, self.emulator_buffer = self.emulator_buffer.split(b"\n")
            self.emulator_lines += [l.decode(errors="replace") for l in lines]
        return data

    def emulator_report(self, sig=signal.SIGUSR1, wait=10.0):
        """The emulator's JSON report line, asked for with `sig`; None when none came within `wait` s."""
        if self.emulator is None or self.emulator.poll() is not None:
            return None
        self.emulator_lines.clear()
        self.emulator.send_signal(sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            for line in self.emulator_lines:
                if line.lstrip().startswith("{"):
                    return line.strip()
            if self.read_emulator(wait=0.1) == b"":
                break
        return None

    def forget_pty(self):
        if self.pty is not None:
            self.selector.unregister(self.pty)
            os.close(self.pty)
            self.pty = None
        try:
            self.selector.unregister(self.emulator.stdout)
        except (KeyError, ValueError):
            pass

    # -- qemu -----------------------------------------------------------------------------------------------
    def qemu_command(self):
        a = self.args
        return [
            "qemu-system-x86_64", "-accel", "tcg", "-smp", "2", "-m", "1024", "-nographic", "-no-reboot",
            "-nic", "none",
            "-kernel", a.kernel, "-initrd", a.initrd,
            "-append", "console=ttyS0 root=/dev/vda rw panic=-1 quiet",
            "-drive", "file=%s,format=qcow2,if=virtio" % a.disk,
            "-drive", "file=%s,format=raw,if=virtio,readonly=on" % a.payload,
            # The USB GPS: an FTDI bridge that exists in the guest while someone is connected to gps.sock.
            "-device", "qemu-xhci,id=xhci",
            "-chardev", "socket,id=gps0,path=%s,server=on,wait=off" % self.gps_path,
            "-device", "usb-serial,chardev=gps0,bus=xhci.0",
            # The control channel: /dev/virtio-ports/rig in the guest.
            "-device", "virtio-serial",
            "-chardev", "socket,id=ctl,path=%s,server=on,wait=off" % self.ctl_path,
            "-device", "virtserialport,chardev=ctl,name=rig",
        ]

    def start_qemu(self):
        for path in (self.ctl_path, self.gps_path):
            if os.path.exists(path):
                os.unlink(path)
        self.boots += 1
        self.console.write(b"\n==== rig.py: qemu start %d ====\n" % self.boots)
        self.console.flush()
        self.qemu = subprocess.Popen(self.qemu_command(), stdin=subprocess.DEVNULL, stdout=self.console,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.qemu_started = time.monotonic()
        self.hello_seen = False
        self.say("qemu: started (boot %d, pid %d)" % (self.boots, self.qemu.pid))
        self.ctl = self.connect(self.ctl_path)
        self.ctl_buffer = b""
        self.selector.register(self.ctl, selectors.EVENT_READ, "ctl")
        if self.plugged:  # a receiver stays plugged in across a reboot
            self.plug(quiet=True)

    def connect(self, path, wait=10.0):
        deadline = time.monotonic() + wait
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
                s.setblocking(False)
                return s
            except (FileNotFoundError, ConnectionRefusedError):
                s.close()
                if self.qemu.poll() is not None:
                    raise RuntimeError("qemu exited (%s) before %s existed: see console.log"
                                       % (self.qemu.returncode, path))
                if time.monotonic() > deadline:
                    raise RuntimeError("no socket at %s" % path)
                time.sleep(0.05)

    def drop_qemu_sockets(self):
        for name in ("ctl", "gps"):
            s = getattr(self, name)
            if s is not None:
                self.selector.unregister(s)
                s.close()
                setattr(self, name, None)

    # -- the receiver's cable -------------------------------------------------------------------------------
    def plug(self, quiet=False):
        if self.gps is not None:
            return "ok already plugged"
        self.gps = self.connect(self.gps_path)
        self.selector.register(self.gps, selectors.EVENT_READ, "gps")
        self.plugged = True
        # The cable powers a USB receiver: it powers up now, and its first words reach the guest.
        self.power_emulator(signal.SIGHUP)
        if not quiet:
            self.say("gps: plugged")
        return "ok plugged"

    def unplug(self):
        self.plugged = False
        if self.gps is None:
            return "ok not plugged"
        self.selector.unregister(self.gps)
        self.gps.close()
        self.gps = None
        self.power_emulator(signal.SIGUSR2)
        self.say("gps: unplugged")
        return "ok unplugged"

    def power_emulator(self, sig):
        """SIGUSR2 cuts the emulated receiver's supply, SIGHUP restores it (Sources/ReceiverEmulatorMain/main.swift)."""
        if self.emulator is not None and self.emulator.poll() is None:
            self.emulator.send_signal(sig)

    def pump_pty(self):
        try:
            data = os.read(self.pty, 4096)
        except BlockingIOError:
            return
        except OSError:  # EIO: the emulator closed its side
            self.say("emulator: its pty closed")
            self.forget_pty()
            return
        if self.gps is None or not data:
            return
        try:
            sent = self.gps.send(data)
            self.counters["to_guest"] += sent
            self.counters["dropped"] += len(data) - sent
        except BlockingIOError:  # nobody in the guest reads the tty: the bytes are lost, as on a real wire
            self.counters["dropped"] += len(data)
        except OSError:
            pass

    def receive(self, channel):
        """The bytes waiting on `channel`: None when there are none yet, b"" when its other end went away (it is
        then unregistered and closed, for the caller to forget)."""
        try:
            data = channel.recv(4096)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        if not data:
            self.selector.unregister(channel)
            channel.close()
        return data

    def pump_gps(self):
        data = self.receive(self.gps)
        if data is None:
            return
        if not data:  # qemu went away
            self.gps = None
            return
        self.counters["from_guest"] += len(data)
        self.from_guest_log.write("%.3f %s\n" % (time.monotonic() - self.start, data.hex()))
        written = 0
        if self.pty is not None:
            try:
                written = os.write(self.pty, data)
            except OSError:
                pass
        self.counters["from_guest_dropped"] += len(data) - written

    # -- the control channel --------------------------------------------------------------------------------
    def pump_ctl(self):
        data = self.receive(self.ctl)
        if data is None:
            return
        if not data:
            self.ctl = None
            return
        self.ctl_buffer += data
        while b"\n" in self.ctl_buffer:
            line, self.ctl_buffer = self.ctl_buffer.split(b"\n", 1)
            line = line.decode(errors="replace").strip()
            if not line:
                continue
            answer = self.handle(line)
            try:
                self.ctl.setblocking(True)
                self.ctl.sendall((answer + "\n").encode())
                self.ctl.setblocking(False)
            except OSError as error:
                self.say("ctl: cannot answer: %s" % error)

    def handle(self, line):
        command, _, rest = line.partition(" ")
        if command == "hello":
            self.hello_seen = True
            self.say("guest: hello %s (%.1f s after qemu started)" % (rest, time.monotonic() - self.qemu_started))
            return "ok"
        if command == "log":
            self.say("guest: " + rest)
            return "ok"
        if command == "plug":
            try:
                return self.plug()
            except RuntimeError as error:
                return "error %s" % error
        if command == "unplug":
            return self.unplug()
        if command == "swap":
            if not rest or not rest.replace("_", "").isalnum():
                return "error usage: swap PERSONALITY"
            self.unplug()
            report = self.emulator_report(signal.SIGTERM, wait=3)
            if report:
                self.say("emulator: last report before the swap: " + report)
            kill(self.emulator)
            self.forget_pty()
            try:
                self.start_emulator(rest)
                return self.plug()
            except RuntimeError as error:
                return "error %s" % error
        if command == "supply":
            # The receiver's supply switched with the cable left in, as an enable line on a regulator or a
            # MOSFET does: the guest mirrors its GPIO line here (scripts/vm/guest/lodestar.sh, check_gpio_enable_line).
            if rest not in ("on", "off"):
                return "error usage: supply on|off"
            self.power_emulator(signal.SIGHUP if rest == "on" else signal.SIGUSR2)
            self.say("gps: supply " + rest)
            return "ok supply " + rest
        if command == "emulator-report":
            report = self.emulator_report()
            if report is None:
                return "error no JSON report from the emulator (exit status %s)" % (
                    self.emulator.poll() if self.emulator else None)
            self.say("emulator report: " + report)
            return "ok " + report
        if command == "result":
            parts = rest.split(" ", 2)
            if len(parts) < 2 or parts[1] not in ("pass", "fail"):
                return "error usage: result NAME pass|fail DETAIL"
            name, status, detail = parts[0], parts[1], parts[2] if len(parts) > 2 else ""
            self.results.append((name, status, detail))
            self.say("RESULT %s %s %s" % (name, status.upper(), detail))
            return "ok"
        if command == "reboot-expected":
            self.reboot_expected = True
            self.say("guest: reboot expected")
            return "ok"
        if command == "power-cut":
            self.reboot_expected = True
            self.cut_at = time.monotonic() + random.uniform(0, 3)
            self.say("guest: power cut in %.1f s" % (self.cut_at - time.monotonic()))
            return "ok"
        if command == "keep":
            self.kept = rest
            self.say("guest: kept %d bytes for the next boot" % len(rest))
            return "ok"
        if command == "kept":
            return ("ok " + self.kept) if self.kept else "ok"
        if command == "counters":
            return "ok " + json.dumps(self.counters)
        if command == "done":
            self.done = True
            self.done_at = time.monotonic()
            self.say("guest: done")
            return "ok"
        return "error unknown command %r" % command

    # -- the loop -------------------------------------------------------------------------------------------
    def run(self):
        deadline = self.start + self.args.timeout
        self.start_emulator()
        self.start_qemu()
        while True:
            for key, _ in self.selector.select(timeout=0.2):
                if key.data == "pty" and self.pty is not None:
                    self.pump_pty()
                elif key.data == "gps" and self.gps is not None:
                    self.pump_gps()
                elif key.data == "ctl" and self.ctl is not None:
                    self.pump_ctl()
                elif key.data == "emulator" and self.read_emulator() == b"":
                    self.say("emulator: exited (%s)" % self.emulator.wait())
                    self.forget_pty()
            if self.cut_at is not None and time.monotonic() >= self.cut_at and self.qemu.poll() is None:
                self.cut_at = None
                self.qemu.kill()
                self.qemu.wait()
                self.say("power cut: qemu killed")
            if self.qemu.poll() is not None:
                self.say("qemu: exited with %d after %.1f s" % (self.qemu.returncode,
                                                                time.monotonic() - self.qemu_started))
                self.drop_qemu_sockets()
                if self.reboot_expected and not self.done:
                    self.reboot_expected = False
                    self.start_qemu()
                    continue
                return
            now = time.monotonic()
            if (not self.hello_seen and now - self.qemu_started > self.args.boot_timeout
                    and self.boot_retries < 2):
                self.boot_retries += 1
                self.say("qemu: no hello %.0f s after it started; killing it and starting it again (retry %d)"
                         % (now - self.qemu_started, self.boot_retries))
                kill(self.qemu)
                self.drop_qemu_sockets()
                self.start_qemu()
                continue
            if now > deadline:
                self.say("timeout: the VM ran past %d s; killing qemu" % self.args.timeout)
                return
            if self.done and now - self.done_at > 90:
                self.say("qemu: did not power off within 90 s of done; killing it")
                return

    def finish(self):
        kill(self.qemu)
        report = self.emulator_report(signal.SIGTERM, wait=3)
        if report:
            self.say("emulator: last report: " + report)
        kill(self.emulator)
        failed = [r for r in self.results if r[1] == "fail"]
        self.say("summary: %d results, %d failed, done %s, bytes to guest %d, from guest %d, dropped %d, "
                 "boots retried %d"
                 % (len(self.results), len(failed), "yes" if self.done else "no", self.counters["to_guest"],
                    self.counters["from_guest"], self.counters["dropped"], self.boot_retries))
        for name, _, detail in failed:
            self.say("FAILED %s: %s" % (name, detail))
        if not self.done:
            self.say("the scenario never said done; the console's last lines:")
            self.console.flush()
            with open(os.path.join(self.run_dir, "console.log"), "rb") as f:
                for line in f.read().decode(errors="replace").splitlines()[-25:]:
                    print("    " + line, flush=True)
        return 0 if self.done and self.results and not failed else 1


def run(args):
    rig = Rig(args)

    def on_signal(signum, _frame):
        raise Stop(signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    stopped = None
    try:
        rig.run()
    except Stop as stop:
        stopped = stop.signum
    except RuntimeError as error:
        rig.say("error: %s" % error)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if stopped is not None:
            rig.say("stopped by signal %d: killing qemu and the emulator" % stopped)
        kill(rig.qemu)
    try:
        status = rig.finish()
    finally:
        kill(rig.emulator)
    return 128 + stopped if stopped is not None else status


# -- the stand-in receiver ------------------------------------------------------------------------------------
def nmea_epochs(path):
    """The capture's NMEA sentences grouped by fix time (GGA, RMC and ZDA carry it in field 1)."""
    epochs, current, current_time = [], [], None
    with open(path, "rb") as f:
        for raw in f:
            line = raw.strip()
            if not line.startswith(b"$"):
                continue
            fields = line.split(b",")
            if fields[0][3:6] in (b"GGA", b"RMC", b"ZDA") and len(fields) > 1 and fields[1]:
                if current_time is not None and fields[1] != current_time:
                    epochs.append(current)
                    current = []
                current_time = fields[1]
            current.append(line + b"\r\n")
    if current:
        epochs.append(current)
    return epochs


def stand_in_emulator(args):
    epochs = nmea_epochs(args.capture)
    if not epochs:
        print("stand-in-emulator: no NMEA sentences in %s (a raw NMEA log, not a capture)" % args.capture,
              file=sys.stderr)
        return 65
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    print("device " + os.ttyname(slave), flush=True)
    started = time.monotonic()
    pending = b""
    heard = []  # (emulator clock, what was written to the receiver), each NMEA line or binary chunk
    stop, reports = [], []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGUSR1, lambda *_: reports.append(1))
    # A plain NMEA stand-in has no supply to cut: the rig's unplug and plug signals change nothing.
    signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    index = 0
    next_epoch = time.monotonic()
    while not stop:
        if reports:
            reports.clear()
            stand_in_report(heard, started)
        if time.monotonic() >= next_epoch:
            for sentence in epochs[index % len(epochs)]:
                try:
                    os.write(master, sentence)
                except BlockingIOError:
                    pass
            index += 1
            next_epoch += 1.0 / args.speed
        try:
            pending += os.read(master, 4096)
        except OSError:
            pass
        *lines, pending = pending.split(b"\n")
        for line in lines:
            line = line.strip(b"\r")
            if line:
                text = line.decode() if line.startswith(b"$") and line.isascii() else "hex:" + line.hex()
                heard.append((time.monotonic() - started, text))
        time.sleep(min(0.05, max(0.0, next_epoch - time.monotonic())))
    stand_in_report(heard, started)
    return 0


def stand_in_report(heard, started):
    """The report receiver-emulator gives, for a plain NMEA receiver: always on, at 25 mA, obeying nothing."""
    clock = time.monotonic() - started
    charge = round(25 * clock / 3600, 4)
    print(json.dumps({"clock": round(clock, 3), "receiverMilliampHours": charge, "alwaysOnMilliampHours": charge,
                      "personality": "stand-in", "state": "tracking",
                      "commands": [{"t": round(t, 3), "command": c, "ignored": True} for t, c in heard]},
                     separators=(",", ":")), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    for name in ("--run-dir", "--kernel", "--initrd", "--disk", "--payload", "--emulator", "--capture"):
        r.add_argument(name, required=True)
    r.add_argument("--profile", default="car")
    r.add_argument("--connection", default="usb", choices=("usb", "uart"))
    r.add_argument("--timeout", type=float, default=1800)
    r.add_argument("--boot-timeout", type=float, default=240)
    e = sub.add_parser("stand-in-emulator")
    e.add_argument("--profile", default="car")
    e.add_argument("--capture", required=True)
    e.add_argument("--speed", type=float, default=1)
    e.add_argument("--connection", default="usb")
    args = parser.parse_args()
    if args.command == "run":
        return run(args)
    return stand_in_emulator(args)


if __name__ == "__main__":
    sys.exit(main())
