#!/usr/bin/env python3
"""Writes listings made up with several things changed at once, for `scripts/hunt.sh`.

    scripts/mixed-listings.py OUT_DIR [--count 40] [--seed 65]

Each of `scenarios/made-up/` is `peak2009` with one thing changed. A listing served by someone
else may do several of them at once, and two changes the detector survives apart may break it
together. Each file written here is `peak2009` with two to four changes drawn from the groups
below (one change a group at most), its first line saying which; the same seed writes the same
files. Then:

    scripts/hunt.sh target/release/ferret 1 8 OUT_DIR
"""
import argparse
import pathlib
import random

# Each group: the ways it may change `peak2009`, as (TOML table, {key: value}); "" is the
# scenario's top level.
GROUPS = {
    "failed": [("reads", {"failed": 0.05}), ("reads", {"failed": 0.10})],
    "empty": [("reads", {"empty": 0.03}), ("reads", {"empty": 0.05})],
    "empty_total": [("reads", {"empty_total": '"zero"'}), ("reads", {"empty_total": '"none"'})],
    "hung": [("reads", {"hung": 0.02})],
    "latency": [
        ("reads", {"latency_min_ms": 1000.0, "latency_max_ms": 4000.0}),
        ("reads", {"latency_min_ms": 50.0, "latency_max_ms": 300.0}),
    ],
    "total": [("reads", {"total": "false"})],
    "past_end": [
        ("reads", {"past_end": '"not_found"'}),
        ("reads", {"past_end": '"last_page"'}),
        ("reads", {"past_end": '"first_page"'}),
    ],
    "total_lag": [("reads", {"total_lag_ms": 30000.0}), ("reads", {"total_lag_ms": 60000.0})],
    "late_ends": [("ends", {"late_max_seconds": 10.0}), ("ends", {"late_max_seconds": 30.0})],
    "ends": [
        ("ends", {"early": 0.25, "extend": 0.2}),
        ("ends", {"early": 0.05, "extend": 0.25, "extend_again": 0.6}),
    ],
    "whole_seconds": [("", {"whole_second_reservations": "true"})],
    "ties": [("", {"smaller_number_first": "true"})],
    "numbers": [("", {"unlisted_numbers": 0.3}), ("", {"numbered_at_start": "true"})],
    "per_page": [("", {"per_page": 20}), ("", {"per_page": 25})],
}

PEAK2009 = {
    "off_peak_per_hour": 700.0,
    "peak_per_hour": 2200.0,
    "peak_hour": 22.0,
    "start_hour": 21.5,
}


def mixed(name, rng):
    """One listing's TOML: `peak2009` with two to four groups' changes."""
    tables = {"": {}, "starts": dict(PEAK2009), "ends": {}, "reads": {}}
    for group in rng.sample(sorted(GROUPS), rng.randint(2, 4)):
        table, keys = rng.choice(GROUPS[group])
        tables[table].update(keys)
    changed = [f"{key} = {value}" for t in ("", "ends", "reads") for key, value in tables[t].items()]
    lines = [f"# `peak2009` with {', '.join(changed)}", f'name = "{name}"']
    lines += [f"{key} = {value}" for key, value in tables[""].items()]
    for table in ("starts", "ends", "reads"):
        if tables[table]:
            lines.append(f"[{table}]")
            lines += [f"{key} = {value}" for key, value in tables[table].items()]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path, help="directory the TOML files go to")
    parser.add_argument("--count", type=int, default=40, help="listings to write")
    parser.add_argument("--seed", type=int, default=65, help="seed of the draws")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    for i in range(args.count):
        name = f"mixed{i:02d}"
        (args.out / f"{name}.toml").write_text(mixed(name, rng))


if __name__ == "__main__":
    main()
