#!/usr/bin/env bash
# Looks for broken rules: runs `ferret bench onair` on every listing made up to break the
# detector (scenarios/made-up/*.toml; scenarios/short-lived.toml, whose deep insertions end
# early; scenarios/holes.toml, whose numbers have holes; scenarios/numbered-at-start.toml,
# whose numbers follow the starts; scenarios/start-order.toml, whose equal keys do) over a
# range of worlds, in real time and at ×20, and prints one row per listing and scale for the
# ferret strategy. Rule breaks are rare (stop 54 found one frame end slipped in 1,024 runs),
# so hunt over many seeds: a run takes about a second.
#
#   scripts/hunt.sh [FERRET_BINARY] [FIRST_SEED] [LAST_SEED] [DIR]   # default: target/release/ferret 1 8
#
# With DIR, the listings are DIR's *.toml instead (e.g. those scripts/mixed-listings.py writes).
#
# Exit status 1 when any run reported a false Off Air or let a frame end slip.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/target/release/ferret}
first=${2:-1}
last=${3:-8}
dir=${4:-}
if [[ ! -x $bin ]]; then
    echo "hunt.sh: no ferret binary at $bin (cargo build --release --bin ferret)" >&2
    exit 2
fi

summary='
import json, sys
name, text = sys.argv[1], sys.stdin.read()
decoder, at, runs = json.JSONDecoder(), 0, []
while at < len(text):
    if text[at].isspace():
        at += 1
        continue
    report, at = decoder.raw_decode(text, at)
    runs.append(next(s for s in report["strategies"] if s["strategy"] == "ferret"))
missed = [r["on_air_missed"] - r["on_air_missed_tolerated"] for r in runs]
false = sum(r["false_off_air"] for r in runs)
slipped = sum(r["slipped"] for r in runs)
late_on = sum(r["on_air_p95"] > 20 for r in runs)
worst_off = max(r["off_air_p95"] for r in runs)
worlds = sum(m > 0 for m in missed)
print(f"{name:<22} {len(runs):>6} {false:>6} {slipped:>8} {sum(missed):>7} ({worlds:>3}) {late_on:>11} {worst_off:>14.1f}")
sys.exit(1 if false or slipped else 0)
'

printf '%-22s %6s %6s %8s %13s %11s %14s\n' listing worlds false slipped 'missed (w.)' 'On p95>20' 'Off p95 worst'
status=0
if [[ -n $dir ]]; then
    scenarios=("$dir"/*.toml)
else
    scenarios=("$root"/scenarios/made-up/*.toml "$root"/scenarios/{short-lived,holes,numbered-at-start,start-order}.toml)
fi
for scenario in "${scenarios[@]}"; do
    for scale in 1 20; do
        name="$(basename "$scenario" .toml) ×$scale"
        for seed in $(seq "$first" "$last"); do
            "$bin" bench onair --scenario "$scenario" --hours 3 --seed "$seed" \
                --time-scale "$scale" --json
        done | python3 -c "$summary" "$name" || status=1
    done
done
exit $status
