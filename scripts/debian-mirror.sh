# Sourced by scripts/vm-test and scripts/cross-check: where debootstrap fetches Debian from.

# The first Debian mirror in this machine's apt sources (deb822 .sources files, or one-line .list files).
debian_mirror() {
  local file uri
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }' "$file")
    [ -n "$uri" ] && { echo "${uri%/}"; return; }
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\/.*\/debian\/?$/) { print $i; exit } }' "$file")
    [ -n "$uri" ] && { echo "${uri%/}"; return; }
  done
  echo "no Debian mirror in apt's sources (/etc/apt/sources.list*)" >&2
  return 69
}
