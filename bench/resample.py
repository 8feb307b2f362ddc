#!/usr/bin/env python3
"""Benchmark helper (not a test): a 1 Hz NMEA log resampled at N Hz, to see that the policy does not depend on
the receiver's rate. Between each valid RMC+GGA epoch and the next, up to 5 s later, epochs are placed every
1/N s on the straight line, with the first epoch's speed, course and HDOP (across a longer gap, an outage,
nothing is invented).
GSA and GSV are left out, so every run of the output, including N=1, takes its accuracy from HDOP alone:
compare the output at N against the output at 1, not against the original log.

  bench/resample.py LOG N OUT
  e.g. bench/resample.py Tests/Fixtures/captures/munich-urban-stopgo-31m.nmea 10 /tmp/munich-10hz.nmea
       .build/release/lodestar replay /tmp/munich-10hz.nmea --profile car --evaluate
"""
import sys


def checksum(body):
    value = 0
    for character in body:
        value ^= ord(character)
    return "%02X" % value


def degrees(field, hemisphere, width):
    value = float(field[:width]) + float(field[width:]) / 60
    return -value if hemisphere in "SW" else value


def degrees_minutes(value, width):
    whole = int(abs(value))
    return ("%0" + str(width) + "d%07.4f") % (whole, (abs(value) - whole) * 60)


def seconds_of_day(field):
    return int(field[0:2]) * 3600 + int(field[2:4]) * 60 + float(field[4:])


def time_field(seconds):
    seconds %= 86400
    hours, rest = divmod(seconds, 3600)
    minutes, rest = divmod(rest, 60)
    return "%02d%02d%05.2f" % (hours, minutes, rest)


def epochs(path):
    """Valid RMC epochs with the GGA of the same time."""
    found, current = [], None
    for line in open(path, errors="replace"):
        fields = line.strip().split("*")[0].lstrip("$").split(",")
        if fields[0].endswith("RMC") and len(fields) > 9:
            current = None
            if fields[2] == "A" and fields[3] and fields[5]:
                current = {"rmc": fields, "t": seconds_of_day(fields[1]),
                           "lat": degrees(fields[3], fields[4], 2), "lon": degrees(fields[5], fields[6], 3)}
        elif fields[0].endswith("GGA") and current and len(fields) > 9 and fields[1] == current["rmc"][1]:
            current["gga"] = fields
            found.append(current)
            current = None
    return found


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    source, rate, output = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if rate < 1:
        sys.exit("N must be 1 or more")
    found = epochs(source)
    lines = []
    for first, second in zip(found, found[1:] + [None]):
        gap = second["t"] - first["t"] if second else 0
        steps = max(round(gap * rate), 1) if 0 < gap <= 5 else 1
        for step in range(steps):
            fraction = step / steps
            lat = first["lat"] + ((second["lat"] - first["lat"]) * fraction if steps > 1 else 0)
            lon = first["lon"] + ((second["lon"] - first["lon"]) * fraction if steps > 1 else 0)
            stamp = time_field(first["t"] + fraction * gap)
            position = [degrees_minutes(lat, 2), "N" if lat >= 0 else "S", degrees_minutes(lon, 3),
                        "E" if lon >= 0 else "W"]
            rmc = list(first["rmc"])
            rmc[1], rmc[3:7] = stamp, position
            gga = list(first["gga"])
            gga[1], gga[2:6] = stamp, position
            for fields in (rmc, gga):
                body = ",".join(fields)
                lines.append("$%s*%s" % (body, checksum(body)))
    with open(output, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("%d epochs at %d Hz from %d" % (len(lines) // 2, rate, len(found)))


main()
