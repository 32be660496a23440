#!/usr/bin/env python3
"""A live listing written apart from ferret's simulator, and a scorer written apart from
`ferret score-listing`: a cross-check of the daemon against a listing whose conventions are
not ours, as a user's own listing would be.

    scripts/other-listing.py serve [--port 8091] [--time-scale 20] [--minutes 8] [--seed 5] [--out DIR]
    scripts/other-listing.py score --events FILE [--out DIR] [--listing NAME] [--warmup-secs S]

`serve` makes a world time-compressed K times (frame 1800/K s of wall time), writes its truth
to DIR/truth.jsonl and serves it as Niconico-style RSS on /recent/rss?p=N until stopped.
Where ferret's simulator does one thing, this listing does another, on purpose:

- `pubDate` in Japan's time (+0900), in whole seconds of wall time: at x20 about eleven
  broadcasts start a second, so a key is shared by a dozen;
- broadcasts with the same key listed smaller serial first (ferret's simulator and Niconico
  list the larger first);
- a harsher mix of reservation-to-start gaps (8 % over a minute, 3 % over the tolerance);
- reads that answer 20-300 ms after the page is rendered (0.4-6 s of the real listing's time);
- 1 % of reads an HTTP 500, 1 % an empty page that keeps the true total.

`score` reads the daemon's events file (the README's JSON lines) against DIR/truth.jsonl and
prints, in the real listing's time: starts missed (beyond the tolerance or not), On Air
latency, frame ends slipped (not reported within the grace), Off Air latency, false Off Air
(reported before the broadcast ended) and events reported twice. It exits 1 when a rule is
broken. The scored window opens after the warm-up (20 minutes of the real listing) and closes
half a frame before the end of the events; frame ends are scored up to a grace before it.
"""
import argparse
import bisect
import json
import os
import random
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PER_PAGE = 18
REAL_FRAME = 1800.0
REAL_GRACE = 300.0
REAL_TOLERANCE = 300.0
STARTS_PER_REAL_HOUR = 2000.0
JST = timezone(timedelta(hours=9))


def make_world(rng, scale, t0, span):
    """Broadcasts reserved from three frames before `t0` to `t0 + span` (wall seconds)."""
    frame = REAL_FRAME / scale

    def gap():
        u = rng.random()
        for share, low, high in ((0.80, 0, 15), (0.92, 15, 60), (0.97, 60, 300)):
            if u < share:
                return rng.uniform(low, high) / scale
        return rng.uniform(300, 1200) / scale

    world = []
    t = t0 - 3 * frame
    serial = 100000
    rate = STARTS_PER_REAL_HOUR * scale / 3600.0
    while t < t0 + span:
        t += rng.expovariate(rate)
        serial += 1
        key = int(t)
        g = gap()
        start = t + g
        u = rng.random()
        if u < 0.72:
            end, kind = key + frame, "frame"
        elif u < 0.86:
            end, kind = start + rng.uniform(180, 1700) / scale, "early"
            if end >= key + frame:
                end, kind = key + frame, "frame"
        else:
            steps = 2
            while rng.random() < 0.4 and steps < 12:
                steps += 1
            end, kind = key + steps * frame, "frame"
        if end > start:
            world.append({"id": f"lv{serial}", "serial": serial, "key": key, "start": start,
                          "end": end, "kind": kind, "gap": g})
    return world


def rss(total, items):
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             '<rss version="2.0" xmlns:nicolive="http://live.nicovideo.jp/">', "<channel>",
             "<title>other listing</title><link>http://127.0.0.1/</link>"
             "<description>recent</description>",
             f"<nicolive:total_count>{total}</nicolive:total_count>"]
    for b in items:
        date = format_datetime(datetime.fromtimestamp(b["key"], JST))
        lines.append(f'<item><title><![CDATA[Broadcast & co {b["id"]}]]></title>'
                     f'<link>http://live.example.jp/watch/{b["id"]}</link>'
                     f'<guid isPermaLink="false">{b["id"]}</guid><pubDate>{date}</pubDate>'
                     "<description>on air</description></item>")
    lines.append("</channel></rss>")
    return "\n".join(lines).encode()


def serve(args):
    rng = random.Random(args.seed)
    scale = args.time_scale
    t0 = time.time()
    world = make_world(rng, scale, t0, args.minutes * 60)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "truth.jsonl"), "w") as f:
        for b in world:
            f.write(json.dumps(b) + "\n")
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump({"t0": t0, "time_scale": scale}, f)
    by_start = sorted(world, key=lambda b: b["start"])
    starts = [b["start"] for b in by_start]
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def do_GET(self):
            now = time.time()
            try:
                page = max(1, int(self.path.split("p=", 1)[1].split("&", 1)[0]))
            except (IndexError, ValueError):
                page = 1
            with lock:
                fault = rng.random()
                delay = rng.uniform(0.02, 0.3) * 20 / scale
            if fault < 0.01:
                self.send_response(500)
                self.end_headers()
                return
            live = [b for b in by_start[: bisect.bisect_right(starts, now)] if now < b["end"]]
            live.sort(key=lambda b: (-b["key"], b["serial"]))
            items = [] if fault < 0.02 else live[(page - 1) * PER_PAGE: page * PER_PAGE]
            body = rss(len(live), items)
            time.sleep(delay)
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"serving {len(world)} broadcasts on http://127.0.0.1:{args.port}/recent/rss?p={{page}}"
          f" at x{scale:g} (frame_secs = {REAL_FRAME / scale:g})", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


def quantile(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def score(args):
    with open(os.path.join(args.out, "meta.json")) as f:
        meta = json.load(f)
    scale, t0 = meta["time_scale"], meta["t0"]
    frame, grace, tolerance = REAL_FRAME / scale, REAL_GRACE / scale, REAL_TOLERANCE / scale
    with open(os.path.join(args.out, "truth.jsonl")) as f:
        truth = {b["id"]: b for b in map(json.loads, f)}
    on, off, twice, false_off, last = {}, {}, 0, [], t0
    with open(args.events) as f:
        for number, line in enumerate(f, 1):
            try:
                event = json.loads(line)
                at = datetime.fromisoformat(event["at"].replace("Z", "+00:00")).timestamp()
                kind, event_id = event["event"], event["id"]
            except (ValueError, KeyError) as error:
                sys.exit(f"{args.events}:{number}: not an event: {error}")
            if args.listing and event.get("listing") != args.listing:
                continue
            last = max(last, at)
            seen = on if kind == "on_air" else off
            if event_id in seen:
                twice += 1
                continue
            seen[event_id] = at
            b = truth.get(event_id)
            if kind == "off_air" and b and b["end"] > at:
                false_off.append(event_id)
    if not on:
        which = f" of listing {args.listing}" if args.listing else ""
        sys.exit(f"{args.events}: no On Air events{which}")
    warmup = args.warmup_secs if args.warmup_secs is not None else 1200 / scale
    low, high = t0 + warmup, last - frame / 2
    on_lat, missed, missed_within = [], 0, []
    off_lat, slipped, frame_ends = [], [], 0
    for b in truth.values():
        if low <= b["start"] < high:
            if b["id"] in on:
                on_lat.append(on[b["id"]] - b["start"])
            else:
                missed += 1
                if b["gap"] <= tolerance:
                    missed_within.append(b["id"])
        if b["kind"] == "frame" and low <= b["end"] < last - grace and b["id"] in on:
            frame_ends += 1
            lag = off.get(b["id"], float("inf")) - b["end"]
            if lag <= grace:
                off_lat.append(lag)
            else:
                slipped.append(b["id"])

    def real(values, q):
        return quantile(values, q) * scale

    print(f"x{scale:g}, figures in the real listing's time")
    print(f"starts {len(on_lat) + missed}: missed {missed} (within the tolerance "
          f"{len(missed_within)}), On Air p50 / p95 / max {real(on_lat, 0.5):.1f} / "
          f"{real(on_lat, 0.95):.1f} / {real(on_lat, 1):.1f} s")
    print(f"frame ends {frame_ends}: slipped {len(slipped)}, Off Air p50 / p95 / max "
          f"{real(off_lat, 0.5):.1f} / {real(off_lat, 0.95):.1f} / {real(off_lat, 1):.1f} s")
    print(f"false Off Air {len(false_off)}, reported twice {twice}")
    broken = missed_within + slipped + false_off
    if broken or twice:
        print(f"rules broken: {broken[:10]}", file=sys.stderr)
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("serve", help="serve a world")
    s.add_argument("--port", type=int, default=8091)
    s.add_argument("--time-scale", type=float, default=20.0)
    s.add_argument("--minutes", type=float, default=8.0, help="wall minutes of starts")
    s.add_argument("--seed", type=int, default=5)
    s.add_argument("--out", default="other-listing")
    c = commands.add_parser("score", help="score an events file against the world's truth")
    c.add_argument("--events", required=True)
    c.add_argument("--out", default="other-listing")
    c.add_argument("--listing", help="only the events of this listing (name in the config)")
    c.add_argument("--warmup-secs", type=float, help="wall seconds (default: 20 real minutes)")
    args = parser.parse_args()
    if args.command == "serve":
        serve(args)
    else:
        score(args)


if __name__ == "__main__":
    main()
