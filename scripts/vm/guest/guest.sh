#!/bin/bash
# The scenario scripts/vm-test runs in the VM (started by the base image's lodestar-rig.service, from the
# payload drive mounted at /rig). Boot 1: the rig's smoke checks (systemd, the USB GPS's plug and unplug,
# gpsd's hotplug, USB port power), then Lodestar's package when the payload has one; then a reboot with the
# receiver still plugged in (a power cut while Lodestar writes, when it runs). Boot 2: gpsd (and Lodestar)
# pick the receiver up at boot. Every check ends in a `result` line on the host; timings are `log` lines.
set -u
. /rig/lib.sh
. /rig/rig.conf  # RIG_PROFILE, RIG_CONNECTION: what vm-test was asked for
# The service's own checks (check_* functions), when the payload has them.
[ -f /rig/lodestar.sh ] && . /rig/lodestar.sh
rig_open || exit 1
boot=${RIG_BOOT:-1}
rig hello "boot=$boot kernel=$(uname -r)"
log "timing: boot $boot: the scenario started at $(cut -d' ' -f1 /proc/uptime) s of uptime"

deb=$(ls /rig/lodestar_*_amd64.deb 2>/dev/null | head -n 1)
bridge_rule=61-lodestar-usb-serial-bridges.rules

# -- systemd ------------------------------------------------------------------------------------------------
check_systemd() {
  local pid1 state failed
  pid1=$(readlink /proc/1/exe)
  state=$(timeout 120 systemctl is-system-running --wait 2>&1)
  log "timing: boot $boot: $(systemd-analyze time 2>&1 | head -n 1)"
  failed=$(systemctl list-units --failed --plain --no-legend | awk '{ print $1 }' | tr '\n' ' ')
  if [[ $pid1 == */systemd ]] && systemctl is-active -q multi-user.target; then
    result "boot$boot-systemd" pass "PID 1 is $pid1, multi-user.target active, system $state${failed:+, failed units: $failed}"
  else
    result "boot$boot-systemd" fail "PID 1 is $pid1, multi-user.target $(systemctl is-active multi-user.target), system $state"
  fi
}

# -- the USB GPS ----------------------------------------------------------------------------------------------
# plug_receiver NAME: plugs the emulated receiver in and checks the tty, its udev properties, gpsd's hotplug
# (gpsdctl@ttyUSB0.service) and a fix through gpsd.
plug_receiver() {
  local name=$1 t0 t_dev t_gpsdctl t_fix props vendor product group mode link fix
  t0=$(now)
  rig plug || { result "$name" fail "plug: $RIG_REPLY"; return 1; }
  if ! wait_for 30 test -c /dev/ttyUSB0; then
    result "$name" fail "no /dev/ttyUSB0 within 30 s of plug; usb devices: $(cat /sys/bus/usb/devices/*/product 2>/dev/null | tr '\n' ',')"
    return 1
  fi
  t_dev=$(since "$t0")
  udevadm settle -t 10 || :
  props=$(udevadm info -q property -n /dev/ttyUSB0)
  vendor=$(sed -n 's/^ID_VENDOR_ID=//p' <<<"$props")
  product=$(sed -n 's/^ID_MODEL_ID=//p' <<<"$props")
  group=$(stat -c %G /dev/ttyUSB0)
  mode=$(stat -c %a /dev/ttyUSB0)
  link=$(for l in /dev/gps*; do [ -L "$l" ] && echo "$l->$(readlink "$l")"; done | tr '\n' ' ')
  log "timing: $name: plug to /dev/ttyUSB0 $t_dev s"
  if [ "$vendor:$product" = 0403:6001 ] && [ "$group" = dialout ]; then
    result "$name-tty" pass "/dev/ttyUSB0 $vendor:$product $group $mode after $t_dev s, links: ${link:-none}"
  else
    result "$name-tty" fail "/dev/ttyUSB0 $vendor:$product group $group mode $mode, links: ${link:-none}"
  fi
  if wait_for 30 active gpsdctl@ttyUSB0.service; then
    t_gpsdctl=$(since "$t0")
    log "timing: $name: plug to gpsdctl@ttyUSB0 active $t_gpsdctl s"
  else
    log "$name: gpsdctl@ttyUSB0.service is $(systemctl is-active gpsdctl@ttyUSB0.service)"
  fi
  fix=$(first_fix 60)
  if [ -n "$fix" ]; then
    t_fix=$(since "$t0")
    log "timing: $name: plug to the first TPV fix through gpsd $t_fix s"
    result "$name-gpsd" pass "gpsd (gpsd.service $(systemctl is-active gpsd.service)) added the device by hotplug and reports fixes $t_fix s after plug: ${fix:0:200}"
  else
    result "$name-gpsd" fail "no TPV fix from gpsd within 60 s; gpsd.service $(systemctl is-active gpsd.service), gpsdctl@ttyUSB0 $(systemctl is-active gpsdctl@ttyUSB0.service); devices: $(gpsd_devices | head -c 300)"
    log_lines "journal:" "$(journalctl -b --no-pager -n 20 -u gpsd -u 'gpsdctl@*' 2>&1)"
  fi
}

# unplug_receiver NAME: unplugs it and checks the tty goes and gpsd drops the device.
unplug_receiver() {
  local name=$1 t0 t_gone watch watcher watch_ended devices
  watch=/tmp/$name.gpsd
  gpsd_watch 25 > "$watch" 2>&1 &
  watcher=$!
  sleep 2
  t0=$(now)
  rig unplug || { result "$name" fail "unplug: $RIG_REPLY"; return 1; }
  if ! wait_for 20 gone /dev/ttyUSB0; then
    result "$name" fail "/dev/ttyUSB0 still there 20 s after unplug"
    return 1
  fi
  t_gone=$(since "$t0")
  wait_for 20 inactive gpsdctl@ttyUSB0.service || :
  sleep 3
  # A watcher gone before its 25 s means gpsd closed the connection (it exits with no device and no -F/-D).
  if kill -0 "$watcher" 2>/dev/null; then watch_ended="still open"; else watch_ended="closed by gpsd"; fi
  kill "$watcher" 2>/dev/null
  wait "$watcher" 2>/dev/null
  devices=$(gpsd_devices)
  log "timing: $name: unplug to /dev/ttyUSB0 gone $t_gone s"
  result "$name" pass "/dev/ttyUSB0 gone $t_gone s after unplug; gpsdctl@ttyUSB0 $(systemctl is-active gpsdctl@ttyUSB0.service); a watching client got: $(grep -E '"class":"DEVICE"' "$watch" | tr '\n' ' ' | head -c 300) (last: $(tail -n 1 "$watch" | head -c 60)), its connection $watch_ended; gpsd's devices for a new client: ${devices:-none}"
}

# The USB port the receiver is on, and its disable file (Linux 6.0+): what Lodestar's USB power control writes.
# Reports what happens, with the uptime of each write to match the kernel's lines. It passes when writing 1
# drops the tty and, after writing 0, the tty and gpsd's fixes are back; the detail says whether the device
# also came back on its own while the port was still disabled (on a real hub it stays off).
port_power() {
  local device="" d port disable t0 dropped=no back=no t_drop="" t_back="" fix="" dmesg_before off_state on_state
  local w1 w0 kernel kernel_times
  local by_itself="no (watched for 30 s)"
  for d in /sys/bus/usb/devices/*; do
    [ "$(cat "$d/idVendor" 2>/dev/null)" = 0403 ] && device=$d && break
  done
  if [ -z "$device" ] || [ ! -e "$device/port/disable" ]; then
    result port-disable fail "no FTDI device with a port/disable file (device: ${device:-none})"
    return 1
  fi
  port=$(readlink -f "$device/port")
  disable=$port/disable
  log "port-disable: the receiver is $(basename "$device") on $port; disable=$(cat "$disable")"
  dmesg_before=$(dmesg | wc -l)
  t0=$(now)
  w1=$(cut -d' ' -f1 /proc/uptime)
  echo 1 > "$disable"
  if wait_for 10 gone /dev/ttyUSB0; then dropped=yes; t_drop=$(since "$t0"); fi
  if [ "$dropped" = yes ] && wait_for 30 test -c /dev/ttyUSB0; then
    by_itself="YES, $(since "$t0") s after writing 1, while disable read $(cat "$disable")"
  fi
  sleep 1
  off_state="disable=$(cat "$disable"), gpsdctl@ttyUSB0 $(systemctl is-active gpsdctl@ttyUSB0.service), gpsd.service $(systemctl is-active gpsd.service)"
  t0=$(now)
  w0=$(cut -d' ' -f1 /proc/uptime)
  echo 0 > "$disable"
  if [ -c /dev/ttyUSB0 ]; then
    back="yes (it was back already)"
  elif wait_for 20 test -c /dev/ttyUSB0; then
    back=yes
    t_back=$(since "$t0")
  fi
  [ "$back" != no ] && fix=$(first_fix 60)
  on_state="disable=$(cat "$disable"), gpsdctl@ttyUSB0 $(systemctl is-active gpsdctl@ttyUSB0.service), first fix through gpsd: $([ -n "$fix" ] && echo "$(since "$t0") s after writing 0" || echo none in 60 s)"
  kernel=$(dmesg | tail -n +"$((dmesg_before + 1))")
  log_lines "port-disable: kernel:" "$kernel" 20
  # The kernel's own times for the disconnect and the next enumeration, against the two writes.
  kernel_times=$(awk -F'[][]' -v w1="$w1" -v w0="$w0" '
    /USB disconnect/ && !d { d = $2 + 0 }
    /new full-speed USB device/ && d && !n { n = $2 + 0 }
    END { printf "kernel: disconnect %+.1f s after writing 1, enumerated again %s; writing 0 was %.1f s after writing 1%s",
            d - w1, n ? sprintf("%.1f s after writing 1", n - w1) : "not seen", w0 - w1,
            n && n < w0 ? " (so the device came back while the port was disabled)" : "" }' <<<"$kernel")
  local facts="writing 1: ttyUSB0 gone: $dropped${t_drop:+ after $t_drop s}; back on its own: $by_itself ($off_state); writing 0: ttyUSB0 present: $back${t_back:+ after $t_back s} ($on_state); $kernel_times"
  if [ "$dropped" = yes ] && [ "$back" != no ] && [ -n "$fix" ]; then
    result port-disable pass "$facts"
  else
    result port-disable fail "$facts"
  fi
}

# -- Lodestar ---------------------------------------------------------------------------------------------
install_lodestar() {
  local t0 out missing
  log "lodestar: package $(dpkg-deb -f "$deb" Package Version Architecture | tr '\n' ' ')"
  log "lodestar: Depends: $(dpkg-deb -f "$deb" Depends) Recommends: $(dpkg-deb -f "$deb" Recommends)"
  t0=$(now)
  # Offline: what the package depends on must already be in the image (apt's --no-download would say so
  # sooner, but it refuses local .deb files: "Pathname to install is not absolute").
  if out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends -o Acquire::Retries=0 "$deb" 2>&1); then
    result lodestar-install pass "installed in $(since "$t0") s: $(dpkg-query -W -f '${Package} ${Version} ${Status}' lodestar)"
  else
    missing=$(grep -E 'Depends:|but it is not|E:' <<<"$out" | tr '\n' ' ' | head -c 600)
    result lodestar-install fail "apt-get install failed: $missing"
    log_lines "apt:" "$out" 40
    return 1
  fi
  log_lines "lodestar: installed:" "$(dpkg -L lodestar | grep -Ev '^/(usr/share/doc|\.$)' | grep -E 'bin/|systemd|udev|sysusers|/etc/' )" 30
  log "lodestar: user $(id lodestar 2>&1)"
}

configure_lodestar() {
  mkdir -p /etc/lodestar
  # The receiver as gpsd names it (hotplug adds /dev/ttyUSB0) and the profile; the rest is the defaults.
  cat > /etc/lodestar/lodestar.json <<JSON
{
  "profile": "$RIG_PROFILE",
  "gpsd": { "host": "localhost", "port": 2947, "device": "/dev/ttyUSB0" },
  "receiver": { "powerControl": true, "connection": "$RIG_CONNECTION", "powerSwitch": null }
}
JSON
  local out
  if out=$(lodestar config validate /etc/lodestar/lodestar.json 2>&1); then
    result lodestar-config pass "lodestar config validate: ${out:0:200}"
  else
    result lodestar-config fail "lodestar config validate: ${out:0:400}"
  fi
}

lodestar_state() {
  local name=$1 show status
  show=$(systemctl show -p ActiveState,SubState,StatusText,NRestarts,ExecMainStatus lodestar | tr '\n' ' ')
  log "$name: $show"
  status=$(timeout 20 lodestar status 2>&1)
  log_lines "$name: lodestar status:" "$status" 30
  log_lines "$name: journal:" "$(journalctl -b -u lodestar --no-pager -n 40 -o cat 2>&1)" 40
  if [[ $show == *ActiveState=active* ]] && [[ $show == *SubState=running* ]]; then
    result "$name" pass "$show"
  else
    result "$name" fail "$show"
  fi
}

run_lodestar() {
  local t0 out perms packaged
  # The emulator's clock before Lodestar is there: the commands after it are Lodestar's (and gpsd's on its
  # behalf); kept on disk for boot 2.
  emulator_report && report_clock "$REPORT" > /var/lib/lodestar-rig/lodestar-clock
  # Boot 1 ends in a power cut: on the disk now.
  sync /var/lib/lodestar-rig/lodestar-clock
  install_lodestar || return 1
  # The package starts the service at once, with its example config (a /dev/ttyACM0 receiver).
  log "lodestar: right after install: $(systemctl show -p ActiveState,SubState,StatusText lodestar | tr '\n' ' ')"
  # The opt-in bridge rule: the smoke checks installed the repository's copy in /etc/udev/rules.d.
  packaged=/usr/share/lodestar/udev/$bridge_rule
  if [ -f "$packaged" ]; then
    log "lodestar: the package's $bridge_rule $(cmp -s "$packaged" "/etc/udev/rules.d/$bridge_rule" && echo "is the one installed" || echo "differs from the repository's")"
  else
    log "lodestar: the package has no $packaged"
  fi
  perms=$(ls -l /sys/bus/usb/devices/*/*-port*/disable 2>/dev/null | awk '{ print $1, $3, $4, $9 }' | tr '\n' ';')
  log "lodestar: hub ports' disable files after install: $perms"
  configure_lodestar
  t0=$(now)
  if out=$(timeout 90 systemctl enable lodestar 2>&1 && timeout 90 systemctl restart lodestar 2>&1); then
    log "timing: systemctl restart lodestar (Type=notify: until READY=1) took $(since "$t0") s"
  else
    log_lines "lodestar: enable/restart:" "$out"
  fi
  # The emulator's reading at READY, for the charge check.
  emulator_report
  local ready_report=$REPORT
  if ! run_check check_status_names_the_receiver; then sleep 30; fi
  lodestar_state lodestar-service
  power_commands lodestar-power-commands
  run_check check_charge "$ready_report" 90
  run_check check_reload
  run_check check_replug lodestar-replug 10
  # Longer than gpsd's own timeouts: the receiver powers up again when plugged (the rig cuts and restores the
  # emulator's supply with the cable), whatever regime it was left in.
  run_check check_replug lodestar-replug-long 75
  run_check check_kill
  run_check check_watchdog
  run_check check_journal_permissions
  run_check check_journal_priorities
  run_check check_security
  run_check check_motion_line
  run_check check_motion_line ignition
  run_check check_motion_accelerometer
  run_check check_gpio_enable_line
}

# run_check NAME ARGS...: runs lodestar.sh's check NAME when the payload has it.
run_check() {
  if declare -F "$1" >/dev/null; then
    log "timing: $1 started at $(cut -d' ' -f1 /proc/uptime) s of uptime"
    "$@"
    return 0
  fi
  log "no $1 in the payload (lodestar.sh): skipped"
  return 1
}

# power_commands NAME: what the receiver heard since Lodestar was installed, and the charge it drew.
power_commands() {
  local name=$1 since heard
  since=$(cat /var/lib/lodestar-rig/lodestar-clock 2>/dev/null)
  if ! emulator_report || [ -z "$since" ]; then
    result "$name" fail "no emulator report (${RIG_REPLY:0:200}) or no clock from before the install"
    return 1
  fi
  heard=$(commands_since "$since" "$REPORT" | sort | tr '\n' ',')
  log "$name: emulator report: ${REPORT:0:1500}"
  local summary="since emulator clock $since s: ${heard:-no commands}; now $(grep -o '"clock":[0-9.]*\|"state":"[^"]*"\|"receiverMilliampHours":[0-9.]*\|"alwaysOnMilliampHours":[0-9.]*' <<<"$REPORT" | tr '\n' ' ')"
  if [ -n "$heard" ]; then result "$name" pass "$summary"; else result "$name" fail "$summary"; fi
}

# -- the two boots ----------------------------------------------------------------------------------------
if [ "$boot" = 1 ]; then
  check_systemd
  log "gpsd before any receiver: gpsd.socket $(systemctl is-active gpsd.socket), gpsd.service $(systemctl is-active gpsd.service); /etc/default/gpsd: $(grep -v '^#' /etc/default/gpsd | tr '\n' ' ')"
  # The opt-in rule: gpsd's own rules do not match an FTDI bridge.
  install -m 644 "/rig/udev/$bridge_rule" /etc/udev/rules.d/
  udevadm control --reload
  plug_receiver plug
  unplug_receiver unplug
  plug_receiver replug
  port_power
  if [ -n "$deb" ]; then
    run_lodestar
  else
    log "no Lodestar package on the payload: its checks are skipped"
  fi
  # Reboot with the receiver plugged in: boot 2 checks that it is picked up at boot (rig.py starts qemu
  # again on the same overlay and reconnects the receiver).
  test -c /dev/ttyUSB0 || { rig unplug; rig plug; wait_for 30 test -c /dev/ttyUSB0; }
  # With the service running, the reboot is a power cut while it writes (lodestar.sh, power_cut); boot 2
  # checks what it lost.
  if declare -F power_cut >/dev/null && systemctl is-active -q lodestar && power_cut; then
    sleep 60
    log "still running 60 s after the power cut was asked for"
    exit 1
  fi
  rig reboot-expected
  echo reboot > /run/lodestar-rig/after
  log "rebooting"
  exit 0
fi

check_systemd
t0=$(now)
if wait_for 30 test -c /dev/ttyUSB0 && fix=$(first_fix 60) && [ -n "$fix" ]; then
  result boot2-gpsd pass "the receiver plugged in at boot: ttyUSB0 present, gpsdctl@ttyUSB0 $(systemctl is-active gpsdctl@ttyUSB0.service), a fix through gpsd $(since "$t0") s after the scenario started"
else
  result boot2-gpsd fail "ttyUSB0 $([ -c /dev/ttyUSB0 ] && echo present || echo missing), gpsdctl@ttyUSB0 $(systemctl is-active gpsdctl@ttyUSB0.service), gpsd.service $(systemctl is-active gpsd.service), no fix within 60 s"
fi
if [ -n "$deb" ] && dpkg-query -W lodestar >/dev/null 2>&1; then
  sleep 20
  lodestar_state boot2-lodestar-service
  run_check check_power_cut
  power_commands boot2-lodestar-power-commands
  run_check check_mediatek
  run_check check_purge
elif emulator_report; then
  result emulator-report pass "${REPORT:0:300}"
else
  result emulator-report fail "$RIG_REPLY"
fi
rig done
