# Helpers for the VM scenarios (sourced by guest.sh): the control channel to scripts/vm/rig.py on the host,
# results, and waiting with a time limit.

# The control channel: a virtio-serial port, one request line out, one answer line back.
rig_open() {
  local i
  for i in $(seq 1 300); do [ -e /dev/virtio-ports/rig ] && break; sleep 0.1; done
  if [ ! -e /dev/virtio-ports/rig ]; then
    echo "guest: no /dev/virtio-ports/rig (virtio_console loaded: $(lsmod | grep -c '^virtio_console'))" >&2
    return 1
  fi
  exec 3<>/dev/virtio-ports/rig
}

# rig REQUEST...: sends one request; the answer is in $RIG_REPLY; true when it starts with "ok".
rig() {
  local line=${*//$'\n'/ | }
  RIG_REPLY=""
  printf '%s\n' "$line" >&3
  if ! IFS= read -r -t 60 RIG_REPLY <&3; then RIG_REPLY="error no answer from the host"; fi
  RIG_REPLY=${RIG_REPLY%$'\r'}
  [[ $RIG_REPLY == ok* ]]
}

log() { echo "guest: $*"; rig log "$*" || :; }

# result NAME pass|fail DETAIL...
result() {
  local name=$1 status=$2
  shift 2
  echo "guest: result $name $status $*"
  rig result "$name" "$status" "$*" || :
  [ "$status" = pass ]
}

# Each line of a command's output as a log line, with a prefix (at most $3 lines, 40 by default).
log_lines() {
  local prefix=$1 text=$2 max=${3:-40} line n=0
  while IFS= read -r line; do
    n=$((n + 1))
    [ "$n" -le "$max" ] || { log "$prefix ... ($(wc -l <<<"$text") lines)"; break; }
    log "$prefix $line"
  done <<<"$text"
}

now() { date +%s.%N; }
# since T: seconds from T to now, one decimal.
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# wait_for SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds; false past SECONDS.
wait_for() {
  local limit=$1 start
  shift
  start=$(now)
  until "$@"; do
    if awk -v a="$start" -v b="$(now)" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; then return 1; fi
    sleep 0.1
  done
}
gone() { [ ! -e "$1" ]; }
active() { systemctl is-active -q "$1"; }
inactive() { ! systemctl is-active -q "$1"; }

# gpsd_watch SECONDS: what gpsd reports to a watching client for SECONDS, one JSON object a line (gpspipe -w
# in bash: bookworm's gpspipe is in gpsd-clients, which would bring GTK and matplotlib into the image).
# Connecting starts gpsd through gpsd.socket when it is not running; the output ends early if gpsd exits.
gpsd_watch() {
  local line end=$((SECONDS + $1))
  exec 5<>/dev/tcp/127.0.0.1/2947 || return 1
  printf '?WATCH={"enable":true,"json":true}\n' >&5
  while [ "$SECONDS" -lt "$end" ] && IFS= read -r -t "$((end - SECONDS))" line <&5; do
    # || return: systemd starts services with SIGPIPE ignored, so a reader gone (grep -m 1) is only an error.
    printf '%s\n' "${line%$'\r'}" 2>/dev/null || { exec 5<&-; return 0; }
  done
  exec 5<&-
}

# The first TPV line with a 2D or 3D fix gpsd reports within $1 seconds.
first_fix() { gpsd_watch "$1" 2>/dev/null | grep -m 1 -E '"class":"TPV".*"mode":[23]'; }

# The devices gpsd has now (its DEVICES report to a new client).
gpsd_devices() { gpsd_watch 3 2>/dev/null | grep -m 1 -o '"class":"DEVICES","devices":\[[^]]*\]'; }

# The emulator's report (rig emulator-report), in $REPORT; false when there is none.
emulator_report() {
  REPORT=""
  rig emulator-report || return 1
  REPORT=${RIG_REPLY#ok }
}
# report_clock REPORT: the emulator's clock in a report.
report_clock() { grep -o '"clock":[0-9.e+-]*' <<<"$1" | head -n 1 | cut -d: -f2; }
# commands_since CLOCK REPORT: the commands the receiver heard after CLOCK, as "NAME xCOUNT" (ignored ones
# marked), one line each.
commands_since() {
  grep -o '{"t":[0-9.e+-]*,"command":"[^"]*","ignored":[a-z]*}' <<<"$2" \
    | awk -F'[:,"]+' -v since="$1" '$3 + 0 > since + 0 { name = $5 ($7 ~ /^true/ ? " (ignored)" : ""); n[name]++ }
        END { for (c in n) print c " x" n[c] }'
}
