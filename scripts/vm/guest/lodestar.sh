# The service as a Pi user meets it, after guest.sh installed the package and started it (sourced by guest.sh;
# lib.sh's helpers). Each check ends in a `result` line on the host; the facts it saw are in its detail.

journal_since() { journalctl -u lodestar --no-pager -o cat --since "@$1" 2>/dev/null; }
main_pid() { systemctl show -p MainPID --value lodestar; }
restarts() { systemctl show -p NRestarts --value lodestar; }
status_json() { timeout 20 lodestar status --json 2>/dev/null; }
# json_number KEY TEXT: the first number under "KEY" in TEXT (compact or pretty-printed JSON).
json_number() { grep -oE "\"$1\": *[0-9.e+-]+" <<<"$2" | head -n 1 | sed 's/.*: *//'; }
# The service is running and past READY=1: active, and its status file names a receiver.
running_and_ready() { [ "$(systemctl show -p ActiveState,SubState --value lodestar | tr '\n' ' ')" = "active running " ]; }

# READY, and `lodestar status` names the receiver, the mechanism and the regime.
check_status_names_the_receiver() {
  local status
  wait_for 60 bash -c 'timeout 10 lodestar status 2>/dev/null | grep -q "receiver: .*u-blox"' || true
  status=$(timeout 20 lodestar status 2>&1)
  if running_and_ready && grep -q '^regime: ' <<<"$status" && grep -q 'receiver: .*u-blox' <<<"$status" \
    && grep -q 'mechanism: ubx' <<<"$status"; then
    result lodestar-status pass "$(grep -E '^(regime|receiver|energy)' <<<"$status" | tr '\n' ' ' | head -c 500)"
  else
    result lodestar-status fail "$(tr '\n' ' ' <<<"$status" | head -c 800)"
  fi
}

# The charge the emulator on the host measured against what `lodestar status` estimated, over the same span:
# from READY (the ledger's start) to now. Within 10 %.
check_charge() {
  local start_report=$1 status end measured estimated ratio
  sleep "${2:-120}"
  status=$(status_json)
  emulator_report || { result lodestar-charge fail "no emulator report: $RIG_REPLY"; return 1; }
  end=$REPORT
  measured=$(awk -v a="$(json_number receiverMilliampHours "$start_report")" -v b="$(json_number receiverMilliampHours "$end")" 'BEGIN { printf "%.4f", b - a }')
  estimated=$(json_number chargeMilliampHours "$status")
  local always=$(json_number alwaysOnMilliampHours "$status")
  local heard
  heard=$(commands_since "$(report_clock "$start_report")" "$end" | sort | tr '\n' ',')
  if [ -z "$estimated" ] || [ -z "$measured" ]; then
    result lodestar-charge fail "no figures: status ${status:0:300}"
    return 1
  fi
  ratio=$(awk -v m="$measured" -v e="$estimated" 'BEGIN { if (m <= 0) print "inf"; else printf "%.3f", e / m }')
  local detail="over $(awk -v a="$(report_clock "$start_report")" -v b="$(report_clock "$end")" 'BEGIN { printf "%.0f", b - a }') s: the emulator measured $measured mAh, lodestar status estimated $estimated mAh (ratio $ratio; always on $always mAh); commands heard: ${heard:-none}"
  if [ -n "$heard" ] && awk -v r="$ratio" 'BEGIN { exit !(r != "inf" && r >= 0.9 && r <= 1.1) }'; then
    result lodestar-charge pass "$detail"
  else
    result lodestar-charge fail "$detail"
  fi
}

# systemctl reload with a changed profile takes effect; a broken config is refused and the old one runs on.
check_reload() {
  local t0 config=/etc/lodestar/lodestar.json saved
  saved=$(cat "$config")
  t0=$(date +%s)
  sed -i "s/\"profile\": \"$RIG_PROFILE\"/\"profile\": \"bike\"/" "$config"
  systemctl reload lodestar
  if wait_for 30 bash -c 'timeout 10 lodestar status 2>/dev/null | grep -q "profile bike"'; then
    result lodestar-reload pass "after systemctl reload: $(timeout 10 lodestar status 2>/dev/null | head -n 1); journal: $(journal_since "$t0" | grep -m 1 'reloading')"
  else
    result lodestar-reload fail "status: $(timeout 10 lodestar status 2>&1 | head -n 1); journal: $(journal_since "$t0" | tail -n 5 | tr '\n' ' ')"
  fi
  t0=$(date +%s)
  printf '{ "profile": "bike", "gpsd": { "port": "not a port" }, ' >"$config"
  systemctl reload lodestar
  sleep 3
  if wait_for 20 bash -c "journalctl -u lodestar --no-pager -o cat --since @$t0 | grep -q 'reload refused'" \
    && running_and_ready && timeout 10 lodestar status 2>/dev/null | grep -q "profile bike"; then
    result lodestar-reload-refused pass "a broken config: $(journal_since "$t0" | grep -A2 -m 1 'reload refused' | tr '\n' ' ' | head -c 400); still $(systemctl is-active lodestar), $(timeout 10 lodestar status 2>/dev/null | head -n 1)"
  else
    result lodestar-reload-refused fail "$(systemctl is-active lodestar); journal: $(journal_since "$t0" | tail -n 6 | tr '\n' ' ')"
  fi
  printf '%s\n' "$saved" >"$config"
  systemctl reload lodestar
  wait_for 30 bash -c "timeout 10 lodestar status 2>/dev/null | grep -q 'profile $RIG_PROFILE'" || true
}

# Unplug and replug: udev and gpsd see the device go and come back, and Lodestar identifies it again and
# applies its power setup again. $1: how long it stays unplugged.
check_replug() {
  local name=$1 away=$2 t0 seen last
  t0=$(date +%s)
  last=$(jsonl_times | sort | tail -n 1)
  rig unplug || { result "$name" fail "unplug: $RIG_REPLY"; return 1; }
  wait_for 20 gone /dev/ttyUSB0 || true
  sleep "$away"
  rig plug || { result "$name" fail "plug: $RIG_REPLY"; return 1; }
  wait_for 30 test -c /dev/ttyUSB0 || true
  # Identified again, then a regime commanded after it.
  if wait_for 120 bash -c "journalctl -u lodestar --no-pager -o cat --since @$t0 | grep -A 200 'receiverIdentified: again' | grep -q 'regimeCommanded'"; then
    seen=$(journal_since "$t0" | grep -E 'receiverLost|gpsdLost|receiverBack|receiverIdentified|regimeCommanded' | head -n 6 | cut -c1-160 | tr '\n' ' ')
    # And the track goes on: a location with a timestamp after the last one before the unplug.
    if wait_for 120 newer_location_than "$last"; then
      result "$name" pass "unplugged $away s: $seen; a new location $(jsonl_times | sort | tail -n 1) after $last"
    else
      result "$name" fail "unplugged $away s: identified again, but no location after $last within 120 s: $(journal_since "$t0" | tail -n 8 | cut -c1-200 | tr '\n' ' ')"
    fi
  else
    result "$name" fail "unplugged $away s; journal: $(journal_since "$t0" | tail -n 12 | cut -c1-200 | tr '\n' ' ')"
  fi
}

# A MediaTek on the same cable in place of the u-blox: gpsd's MTK-3301 driver identifies it, Lodestar picks
# PMTK for it, and the policy's standby reaches it as PMTK161 through the guest's gpsd.
check_mediatek() {
  local t0 heard
  t0=$(date +%s)
  rig swap mtk3339 || { result lodestar-mediatek fail "swap: $RIG_REPLY"; return 1; }
  wait_for 30 test -c /dev/ttyUSB0 || true
  if ! wait_for 120 bash -c "journalctl -u lodestar --no-pager -o cat --since @$t0 | grep -q 'receiverIdentified: .*mechanism pmtk'"; then
    result lodestar-mediatek fail "not identified as a MediaTek within 120 s: $(journal_since "$t0" | grep -E 'receiver|regime' | tail -n 6 | cut -c1-200 | tr '\n' ' ')"
    return 1
  fi
  # The asset profile keeps the receiver down between its rare checks: its standby comes at once, whatever
  # the capture is doing (the car profile naps only when the drive allows).
  sed -i -E 's/"profile": "[a-z-]+"/"profile": "asset"/' /etc/lodestar/lodestar.json
  systemctl reload lodestar
  wait_for 120 pmtk_standby_heard || true
  heard=$(commands_since 0 "$REPORT" | sort | tr '\n' ',')
  if grep -q 'PMTK161 x' <<<"$heard"; then
    result lodestar-mediatek pass "$(journal_since "$t0" | grep -m 1 'receiverIdentified' | cut -c1-200); the emulated MT3339 heard: $heard"
  else
    result lodestar-mediatek fail "no PMTK161 within 120 s of a reload to the asset profile; heard: ${heard:-nothing}; journal: $(journal_since "$t0" | tail -n 8 | cut -c1-200 | tr '\n' ' ')"
  fi
}
pmtk_standby_heard() { emulator_report && grep -q '"command":"PMTK161","ignored":false' <<<"$REPORT" || { sleep 2; false; }; }

# newer_location_than TIME: the jsonl has a location timestamped after TIME (ISO 8601 UTC sorts as text).
newer_location_than() { [[ "$(jsonl_times | sort | tail -n 1)" > "$1" ]]; }

# The track's delivered timestamps, as the jsonl has them and as the store has them.
# location_times: the "timestamp" of each location line ({"type":"location",…}) on stdin.
location_times() { grep '^{"type":"location"' | grep -o '"timestamp":"[^"]*"' | cut -d'"' -f4; }
jsonl_times() { cat /var/lib/lodestar/track/locations*.jsonl 2>/dev/null | location_times; }
store_times() { lodestar store export --format jsonl --store /var/lib/lodestar/store.sqlite 2>/dev/null | location_times; }

# SIGKILL: systemd restarts it, the state is resumed, and nothing is duplicated around the restart; the store
# lacks only what the jsonl got in the 5 s before the kill (held for its commit, docs/store.md).
check_kill() {
  local before t0 jsonl store dups newest held_from
  before=$(restarts)
  t0=$(date +%s)
  newest=$(jsonl_times | sort | tail -n 1)
  # 5 s of commit interval and 1 s for the fix times' rounding.
  held_from=$(date -u -d "@$(( $(date -d "${newest:-1970-01-01T00:00:00Z}" +%s) - 6 ))" +%Y-%m-%dT%H:%M:%S)
  systemctl kill -s KILL lodestar
  if ! wait_for 60 bash -c "[ \$(systemctl show -p NRestarts --value lodestar) -gt $before ] && systemctl is-active -q lodestar"; then
    result lodestar-kill fail "not restarted: NRestarts $(restarts), $(systemctl is-active lodestar)"
    return 1
  fi
  sleep 25
  jsonl=$(jsonl_times)
  store=$(store_times)
  dups=$(sort <<<"$jsonl" | uniq -d | wc -l)
  local sdups only_jsonl only_store restored unheld
  sdups=$(sort <<<"$store" | uniq -d | wc -l)
  only_jsonl=$(comm -23 <(sort -u <<<"$jsonl") <(sort -u <<<"$store") | wc -l)
  unheld=$(comm -23 <(sort -u <<<"$jsonl") <(sort -u <<<"$store") | awk -v from="$held_from" '$0 < from' | wc -l)
  only_store=$(comm -13 <(sort -u <<<"$jsonl") <(sort -u <<<"$store") | wc -l)
  restored=$(journal_since "$t0" | grep -m 1 'restored' | cut -c1-200)
  # Which ones, to place them against the kill (the restored last location) and the earlier scenarios.
  local which
  which=$({ comm -23 <(sort -u <<<"$jsonl") <(sort -u <<<"$store") | sed 's/^/jsonl only: /'
    comm -13 <(sort -u <<<"$jsonl") <(sort -u <<<"$store") | sed 's/^/store only: /'; } | head -n 6 | tr '\n' ' ')
  local detail="NRestarts $before -> $(restarts); jsonl $(wc -l <<<"$jsonl") locations, $dups duplicated; store $(wc -l <<<"$store"), $sdups duplicated; only in jsonl $only_jsonl ($unheld of them before $held_from, 6 s before the newest at the kill, $newest), only in store $only_store ${which:+($which)}; $restored"
  if [ "$dups" -eq 0 ] && [ "$sdups" -eq 0 ] && [ "$unheld" -eq 0 ] && [ "$only_store" -le 1 ] && [ -n "$restored" ]; then
    result lodestar-kill pass "$detail"
  else
    result lodestar-kill fail "$detail"
  fi
}

# A hung daemon (SIGSTOP) stops pinging the watchdog; systemd kills and restarts it.
check_watchdog() {
  local before pid t0
  before=$(restarts)
  pid=$(main_pid)
  t0=$(now)
  kill -STOP "$pid"
  if wait_for 90 bash -c "[ \$(systemctl show -p NRestarts --value lodestar) -gt $before ] && systemctl is-active -q lodestar"; then
    result lodestar-watchdog pass "stopped pid $pid; restarted after $(since "$t0") s (WatchdogSec=$(systemctl show -p WatchdogUSec --value lodestar)); new pid $(main_pid); $(journalctl -b --no-pager -o cat | grep -m 1 -i 'watchdog timeout' | cut -c1-150)"
  else
    kill -CONT "$pid" 2>/dev/null
    result lodestar-watchdog fail "NRestarts $(restarts), $(systemctl is-active lodestar) after $(since "$t0") s"
  fi
}

# Nothing in the journal says permission denied or not permitted, for the service or about its files.
check_journal_permissions() {
  local found
  found=$(journalctl -b --no-pager -o cat -u lodestar 2>/dev/null | grep -iE 'permission denied|not permitted|EACCES|EPERM' | head -n 5)
  if [ -z "$found" ]; then
    result lodestar-journal-permissions pass "no 'permission denied' or 'not permitted' in $(journalctl -b -u lodestar --no-pager -o cat | wc -l) journal lines of lodestar.service"
  else
    result lodestar-journal-permissions fail "$(tr '\n' ' ' <<<"$found" | head -c 600)"
  fi
}

# The service's lines reach journald with their priorities (sd-daemon prefixes, JOURNAL_STREAM): regime changes
# are info, the start is a notice, and `journalctl -p warning` shows no regime change.
check_journal_priorities() {
  local info notice warning
  info=$(journalctl -b -u lodestar --no-pager -o cat -p info..info 2>/dev/null | grep -c '^lodestar run: regime ')
  notice=$(journalctl -b -u lodestar --no-pager -o cat -p notice..notice 2>/dev/null | grep -c '^lodestar run: profile ')
  warning=$(journalctl -b -u lodestar --no-pager -o cat -p warning 2>/dev/null | grep -c '^lodestar run: regime ')
  if [ "$info" -gt 0 ] && [ "$notice" -gt 0 ] && [ "$warning" -eq 0 ] && \
     ! journalctl -b -u lodestar --no-pager -o cat 2>/dev/null | grep -q '^<[0-7]>'; then
    result lodestar-journal-priorities pass "$info regime lines at info, $notice starts at notice, none at warning or worse; no '<N>' left in a message"
  else
    result lodestar-journal-priorities fail "regime at info $info, start at notice $notice, regime at warning or worse $warning"
  fi
}

# systemd-analyze security's exposure score for the unit as shipped.
check_security() {
  local out score
  out=$(systemd-analyze security --no-pager lodestar.service 2>&1)
  score=$(grep -o 'Overall exposure level for lodestar.service: [0-9.]* [A-Z]*' <<<"$out")
  log_lines "security:" "$(grep -E '^✗' <<<"$out" | cut -c1-140)" 60
  if [ -n "$score" ] && awk -v s="$(awk '{ print $(NF - 1) }' <<<"$score")" 'BEGIN { exit !(s < 5) }'; then
    result lodestar-security pass "$score"
  else
    result lodestar-security fail "${score:-no score}: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
  fi
}

# apt purge removes the config, the state and the logs; the system user stays.
check_purge() {
  local out left
  out=$(DEBIAN_FRONTEND=noninteractive apt-get purge -y lodestar 2>&1) || true
  left=$(ls -d /etc/lodestar /var/lib/lodestar /var/log/lodestar /run/lodestar /usr/bin/lodestar /usr/lib/systemd/system/lodestar.service 2>/dev/null | tr '\n' ' ')
  if [ -z "$left" ] && ! dpkg-query -W lodestar >/dev/null 2>&1 && getent passwd lodestar >/dev/null \
    && ! systemctl is-active -q lodestar; then
    result lodestar-purge pass "apt purge: nothing left of /etc/lodestar, /var/lib/lodestar, the binary or the unit; the user stays: $(id lodestar)"
  else
    result lodestar-purge fail "left: ${left:-nothing}; dpkg: $(dpkg-query -W -f '${Status}' lodestar 2>&1); user: $(id lodestar 2>&1); $(tail -n 5 <<<"$out" | tr '\n' ' ')"
  fi
}

# A motion line on a real gpiochip (gpio-sim, built into the image by scripts/vm-test): the service, paused with
# its receiver down, wakes it when the line goes active, and not before. A profile that pauses within seconds
# of any fix (a 10 km radius) stands in for a parked car; its probes are an hour apart (a pause before the
# sensor has heralded two starts probes at that cadence for 10 min, docs/policy.md) and the fallback 30 min
# away, so a wake within seconds of the edge is the edge's. With `ignition` the line is read for its level
# (`motion.gpio.ignition`): inactive as the service starts, the engine off, and the journal must log both levels
# and say the wake was the ignition's.
receiver_state() { emulator_report && grep -o '"state":"[a-zA-Z]*"' <<<"$REPORT" | head -n 1 | cut -d'"' -f4; }
receiver_down() { case $(receiver_state) in standby | backup | off) true ;; *) sleep 1; false ;; esac }
receiver_up() { case $(receiver_state) in acquiring | tracking | powerSave) true ;; *) sleep 0.5; false ;; esac }
# sim_line NAME: a gpio-sim chip of one line, made through configfs (the module scripts/vm-test built); sets
# SIM_CHIP (gpiochipN) and SIM_LINE (the line's sysfs folder: value, pull), or SIM_ERROR.
sim_line() {
  local bank out
  out=$(modprobe gpio-sim-rig 2>&1; mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config 2>&1)
  bank=/sys/kernel/config/gpio-sim/$1/bank0
  if ! { mkdir -p "$bank/line0" && echo 1 > "$bank/num_lines" && echo "$1" > "$bank/line0/name" \
    && echo 1 > "${bank%/bank0}/live"; } 2>/dev/null; then
    SIM_ERROR="no gpio-sim chip: ${out:0:200}; $(ls /sys/kernel/config/gpio-sim 2>&1)"
    return 1
  fi
  SIM_CHIP=$(cat "$bank/chip_name")
  SIM_LINE=/sys/devices/platform/$(cat "${bank%/bank0}/dev_name")/$SIM_CHIP/sim_gpio0
  udevadm settle -t 10 || :
}

# rig_profile NAME PROBE_SECONDS: a profile that pauses within seconds of any fix and probes every PROBE_SECONDS.
rig_profile() {
  mkdir -p /etc/lodestar/profiles
  cat > "/etc/lodestar/profiles/$1.json" <<JSON
{"name": "$1", "description": "the VM rig's park: paused within seconds of any fix",
 "updates": {"enabled": true, "desiredAccuracy": "nearestTenMeters", "activityType": "automotiveNavigation",
             "pausesAutomatically": true, "autoResume": true},
 "policy": {"stationary": {"automotiveNavigation": {"radius": 10000, "window": 10, "movingSpeed": 100,
            "probeInterval": $2, "maximumProbeInterval": $2}}},
 "receiver": {"model": "ublox8"}}
JSON
}

# park_with_motion NAME MOTION: the parked profile, and `"motion": {MOTION}` in the service's config; restarts
# the service and waits for the receiver to go down, then holds 15 s. Sets PARKED_AT (the restart, epoch
# seconds) and HELD (the receiver's state after the 15 s); a receiver not down within 120 s fails NAME (false).
park_with_motion() {
  local config=/etc/lodestar/lodestar.json
  rig_profile rig-parked 3600
  sed -i -E "s/\"profile\": \"[a-z-]+\"/\"profile\": \"rig-parked\"/" "$config"
  sed -i -E "s|\"powerSwitch\": null|\"powerSwitch\": null }, \"motion\": { $2|" "$config"
  PARKED_AT=$(date +%s)
  systemctl restart lodestar
  if ! wait_for 120 receiver_down; then
    result "$1" fail "the receiver did not go down within 120 s (state $(receiver_state)); config: $(tr -d '\n' <"$config"); journal: $(journal_since "$PARKED_AT" | tail -n 8 | cut -c1-200 | tr '\n' ' ')"
    return 1
  fi
  sleep 15
  HELD=$(receiver_state)
}

check_motion_line() {
  local config=/etc/lodestar/lodestar.json saved chip pull t0 t_start since_edge held name=lodestar-motion-line extra="" said
  if [ "${1:-}" = ignition ]; then
    name=lodestar-ignition-line
    extra=', "ignition": true'
  fi
  saved=$(cat "$config")
  if ! sim_line "$name"; then
    result "$name" fail "$SIM_ERROR"
    return 1
  fi
  chip=$SIM_CHIP
  pull=$SIM_LINE/pull
  log "motion line: /dev/$chip $(stat -c '%G %a' "/dev/$chip"), line 0 $(cat "$SIM_LINE/value")"
  if park_with_motion "$name" "\"gpio\": { \"chip\": \"$chip\", \"line\": 0$extra }"; then
    t_start=$PARKED_AT
    held=$HELD
    t0=$(date +%s)
    since_edge=$(now)
    echo pull-up > "$pull"
    if [[ $held =~ ^(standby|backup|off)$ ]] && wait_for 30 receiver_up \
      && { [ -z "$extra" ] || { sleep 2; journal_since "$t_start" | grep -q "$chip line 0: ignition off" \
        && journal_since "$t0" | grep -q "$chip line 0: ignition on" && journal_since "$t0" | grep -q 'regime continuous: ignition on'; }; }; then
      said=$(journal_since "$t0" | grep -m 2 -E 'ignition|hint|probe|regime' | cut -c1-160 | tr '\n' ' ')
      result "$name" pass "down ($held) 15 s with the line still; woke ($(receiver_state)) $(since "$since_edge") s after the edge on /dev/$chip line 0; journal: $said"
    else
      result "$name" fail "held $held before the edge; $(receiver_state) 30 s after it; journal: $(journal_since "$t0" | tail -n 8 | cut -c1-200 | tr '\n' ' ')"
    fi
  fi
  echo pull-down > "$pull"
  printf '%s\n' "$saved" >"$config"
  rm -f /etc/lodestar/profiles/rig-parked.json
  systemctl restart lodestar
}

# An accelerometer on a real kernel's IIO (`motion.iio`): the kernel's mma7660 driver bound to an i2c-stub chip
# (a register file the kernel serves as an SMBus device), read through /sys/bus/iio/devices like a real one.
# Writing the chip's registers from here is what moving the sensor would do: the service, paused with its
# receiver down on the same parked profile as the motion line's check, wakes it when an axis changes by
# 2.3 m/s², and not while the registers hold still.
# stub_set ADDRESS REGISTER VALUE: writes one byte of the i2c-stub chip at ADDRESS on I2C_BUS through i2c-dev's
# SMBus ioctl (I2C_SLAVE_FORCE: the driver holds the address).
stub_set() {
  python3 - "/dev/i2c-$I2C_BUS" "$1" "$2" "$3" <<'PY'
import ctypes, fcntl, sys
class Data(ctypes.Union):
    _fields_ = [("byte", ctypes.c_uint8), ("word", ctypes.c_uint16), ("block", ctypes.c_uint8 * 34)]
class Args(ctypes.Structure):
    _fields_ = [("read_write", ctypes.c_uint8), ("command", ctypes.c_uint8), ("size", ctypes.c_uint32),
                ("data", ctypes.POINTER(Data))]
path, address, register, value = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3], 0), int(sys.argv[4], 0)
with open(path, "r+b", buffering=0) as bus:
    fcntl.ioctl(bus, 0x0706, address)  # I2C_SLAVE_FORCE
    data = Data()
    data.byte = value
    fcntl.ioctl(bus, 0x0720, Args(0, register, 2, ctypes.pointer(data)))  # I2C_SMBUS: write, byte data
PY
}

check_motion_accelerometer() {
  local config=/etc/lodestar/lodestar.json saved name=lodestar-motion-accelerometer out adapter device="" t0 held since_jolt said
  saved=$(cat "$config")
  out=$(modprobe i2c-dev 2>&1; modprobe i2c-stub chip_addr=0x4c 2>&1)
  I2C_BUS=""
  for adapter in /sys/bus/i2c/devices/i2c-*; do
    grep -q "SMBus stub" "$adapter/name" 2>/dev/null && I2C_BUS=${adapter##*/i2c-}
  done
  if [ -z "$I2C_BUS" ]; then
    result "$name" fail "no i2c-stub adapter: ${out:0:200}; $(cat /sys/bus/i2c/devices/i2c-*/name 2>&1 | tr '\n' ' ')"
    return 1
  fi
  # Still: x 0, y 0, z 21 counts (1 g at the MMA7660's 21.33 counts a g); then the driver binds and sets its mode.
  stub_set 0x4c 0x00 0 && stub_set 0x4c 0x01 0 && stub_set 0x4c 0x02 21
  out=$(echo mma7660 0x4c 2>&1 > "/sys/bus/i2c/devices/i2c-$I2C_BUS/new_device")
  for _ in $(seq 1 100); do
    device=$(grep -l '^mma7660$' /sys/bus/iio/devices/iio:device*/name 2>/dev/null | head -n 1)
    [ -n "$device" ] && break
    sleep 0.1
  done
  if [ -z "$device" ]; then
    result "$name" fail "no IIO device after binding mma7660 on i2c-$I2C_BUS: ${out:0:200}; $(dmesg | grep -i -E 'mma7660|i2c' | tail -n 3 | tr '\n' ' ')"
    return 1
  fi
  device=${device%/name}
  log "accelerometer: ${device##*/} (mma7660 on i2c-stub bus $I2C_BUS), raw x y z $(cat "$device/in_accel_x_raw" "$device/in_accel_y_raw" "$device/in_accel_z_raw" | tr '\n' ' ')scale $(cat "$device/in_accel_scale"), $(stat -c '%a' "$device/in_accel_x_raw")"
  if park_with_motion "$name" '"iio": { "device": "mma7660" }'; then
    held=$HELD
    t0=$(date +%s)
    since_jolt=$(now)
    stub_set 0x4c 0x00 5  # x: 5 counts, 2.3 m/s²
    if [[ $held =~ ^(standby|backup|off)$ ]] && wait_for 30 receiver_up; then
      said=$(journal_since "$t0" | grep -m 2 -E 'hint|probe|regime' | cut -c1-160 | tr '\n' ' ')
      result "$name" pass "down ($held) 15 s with the accelerometer still; woke ($(receiver_state)) $(since "$since_jolt") s after x went to $(cat "$device/in_accel_x_raw") counts on ${device##*/} (mma7660, i2c-stub); started with: $(journal_since "$PARKED_AT" | grep -m 1 -o 'motion IIO [^;]*'); journal: $said"
    else
      result "$name" fail "held $held before the jolt; $(receiver_state) 30 s after it; x reads $(cat "$device/in_accel_x_raw" 2>&1); journal: $(journal_since "$t0" | tail -n 8 | cut -c1-200 | tr '\n' ' ')"
    fi
  fi
  printf '%s\n' "$saved" >"$config"
  rm -f /etc/lodestar/profiles/rig-parked.json
  systemctl restart lodestar
  echo 0x4c > "/sys/bus/i2c/devices/i2c-$I2C_BUS/delete_device" 2>/dev/null || :
}

# The receiver's supply follows the enable line, as a regulator's EN pin or a MOSFET on it would: while the line
# is low the rig cuts the emulated receiver's supply, and it restores it when the line goes high (rig.py's
# `supply`). Called from the waits, so one process talks to the rig at a time.
follow_line() {
  local value
  value=$(cat "$SIM_LINE/value" 2>/dev/null) || return 0
  [ "$value" = "$SUPPLIED" ] && return 0
  SUPPLIED=$value
  LINE_CHANGES+=" $value@$(since "$LINE_START")s"
  if [ "$value" = 1 ]; then rig supply on; else rig supply off; fi
}
line_low_receiver_off() { follow_line; [ "$SUPPLIED" = 0 ] && [ "$(receiver_state)" = off ] || { sleep 0.4; false; }; }
line_high_receiver_up() { follow_line; [ "$SUPPLIED" = 1 ] && receiver_up; }

# A GPIO enable line on a real gpiochip switches the receiver: lodestar run with `receiver.powerSwitch` on a
# gpio-sim line and a profile that pauses and probes every 30 s. The line goes low at the pause and the
# receiver's supply with it; at the probe it goes high and the receiver comes back, seen at the emulator.
check_gpio_enable_line() {
  local config=/etc/lodestar/lodestar.json saved t0 down_at verdict=""
  saved=$(cat "$config")
  if ! sim_line lodestar-rig-power; then
    result lodestar-gpio-enable-line fail "$SIM_ERROR"
    return 1
  fi
  rig_profile rig-probing 30
  sed -i -E "s/\"profile\": \"[a-z-]+\"/\"profile\": \"rig-probing\"/" "$config"
  # The supply is switched and the backup battery kept, as on a UART receiver wired to an enable line.
  sed -i -E "s/\"connection\": \"[a-z]+\"/\"connection\": \"uart\"/" "$config"
  sed -i -E "s|\"powerSwitch\": null|\"powerSwitch\": { \"type\": \"gpio\", \"chip\": \"$SIM_CHIP\", \"line\": 0 }|" "$config"
  SUPPLIED="" LINE_CHANGES="" LINE_START=$(now)
  t0=$(date +%s)
  follow_line
  systemctl restart lodestar
  if ! wait_for 60 line_high_receiver_up; then
    verdict="line $SUPPLIED, receiver $(receiver_state) 60 s after the start"
  elif ! wait_for 120 line_low_receiver_off; then
    verdict="line $SUPPLIED, receiver $(receiver_state) 120 s after it came up: no pause by the line"
  else
    down_at=$(now)
    if wait_for 75 line_high_receiver_up; then
      result lodestar-gpio-enable-line pass "/dev/$SIM_CHIP line 0 (changes:$LINE_CHANGES): the receiver off with the line low, back ($(receiver_state)) $(since "$down_at") s later at the probe; journal: $(journal_since "$t0" | grep -E 'regime off|switched|power control gpio' | head -n 4 | cut -c1-160 | tr '\n' ' ')"
    else
      verdict="the line did not bring the receiver back within 75 s (line $SUPPLIED, receiver $(receiver_state))"
    fi
  fi
  if [ -n "$verdict" ]; then
    result lodestar-gpio-enable-line fail "$verdict; changes:$LINE_CHANGES; config: $(tr -d '\n' <"$config" | cut -c1-300); journal: $(journal_since "$t0" | tail -n 8 | cut -c1-200 | tr '\n' ' ')"
  fi
  printf '%s\n' "$saved" >"$config"
  rm -f /etc/lodestar/profiles/rig-probing.json
  systemctl restart lodestar
  # The line is released with the old service: whatever it falls to, the next checks need a powered receiver.
  rig supply on || :
}

# The end of boot 1 is a power cut while the service writes: what the store holds is kept on the host (the
# guest's disk would need a sync, which the cut must not get), then the rig kills qemu 0 to 3 s later.
power_cut() {
  local jsonl store t0
  jsonl=$(jsonl_times | sort)
  t0=$(now)
  store=$(store_times | sort)
  rig keep "cut=$(date -u +%Y-%m-%dT%H:%M:%SZ) jsonl=$(grep -c . <<<"$jsonl"),$(tail -n 1 <<<"$jsonl") store=$(tr '\n' ' ' <<<"$store")" || return 1
  log "power cut: the store has $(grep -c . <<<"$store") locations, the newest $(tail -n 1 <<<"$store") (read in $(since "$t0") s); the jsonl $(grep -c . <<<"$jsonl"), the newest $(tail -n 1 <<<"$jsonl")"
  rig power-cut
}

# Boot 2, after that cut (docs/store.md): the store opens as it is, without being moved aside; no location is
# duplicated; what was lost is the newest ones only (no hole), within store.syncInterval (300 s, the default)
# and the commit interval (5 s) of the cut.
check_power_cut() {
  rig kept || { result lodestar-power-cut fail "the rig kept nothing: $RIG_REPLY"; return 1; }
  local kept=${RIG_REPLY#ok}
  kept=${kept# }
  if [[ $kept != cut=* ]]; then
    log "lodestar-power-cut: boot 1 made no power cut"
    return 0
  fi
  local cut jsonl before after_all after newest_before newest_after lost holes dups span exported moved corrupt
  cut=${kept%% *}
  cut=${cut#cut=}
  kept=${kept#* }
  jsonl=${kept%% *}
  jsonl=${jsonl#jsonl=}
  before=$(tr ' ' '\n' <<<"${kept#*store=}" | grep . | sort)
  newest_before=$(tail -n 1 <<<"$before")
  if ! exported=$(lodestar store export --format jsonl --store /var/lib/lodestar/store.sqlite 2>&1 >/dev/null); then
    result lodestar-power-cut fail "lodestar store export failed after the cut: ${exported:0:300}"
    return 1
  fi
  after_all=$(store_times | sort)
  after=$(awk -v newest="$newest_before" '$0 <= newest' <<<"$after_all")
  newest_after=$(tail -n 1 <<<"$after")
  dups=$(uniq -d <<<"$after_all" | grep -c .)
  lost=$(comm -23 <(echo "$before") <(echo "$after") | grep -c .)
  holes=$(comm -23 <(echo "$before") <(echo "$after") | awk -v newest="$newest_after" '$0 < newest' | grep -c .)
  span=0
  if [ -n "$newest_before" ] && [ -n "$newest_after" ]; then
    span=$(( $(date -d "$newest_before" +%s) - $(date -d "$newest_after" +%s) ))
  elif [ -n "$newest_before" ]; then
    span=999999
  fi
  moved=$(journalctl -b --no-pager -o cat -u lodestar | grep -c 'moved aside')
  corrupt=$(ls /var/lib/lodestar/ | grep -c 'corrupt')
  local detail="cut at $cut (1 cut, the rig's random 0-3 s after); before it the store had $(grep -c . <<<"$before") locations up to ${newest_before:-none}, the jsonl (read just before) ${jsonl%%,*} up to ${jsonl#*,}; after it the store has $(grep -c . <<<"$after") of them up to ${newest_after:-none} ($(grep -c . <<<"$after_all") with boot 2's): $lost lost, the newest ${span} s of the track (bound 305 s), $holes older ones missing, $dups duplicated; moved aside $moved, corrupt files $corrupt"
  if [ "$dups" -eq 0 ] && [ "$holes" -eq 0 ] && [ "$span" -le 305 ] && [ "$moved" -eq 0 ] && [ "$corrupt" -eq 0 ] && [ -n "$before" ]; then
    result lodestar-power-cut pass "$detail"
  else
    result lodestar-power-cut fail "$detail"
  fi
}
