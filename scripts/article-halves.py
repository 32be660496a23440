#!/usr/bin/env python3
"""A labelled stream of long texts for `ferret cluster --eval`, made from the real feeds.

    scripts/article-halves.py [--ferret target/release/ferret] [--corpus DIR] [--min-words N] > halves.jsonl

No labelled stream with article texts is at hand (the standard benchmark's files are not
shipped: see ../shared/data/news-clustering/README.md), and every clustering threshold was
tuned on headlines. This stands in for one: each article of ../shared/data/feed-corpus/real
with at least N words of text (its content, else its summary; markup dropped) becomes two
items labelled alike, its title with the first half of its words, and the second half without
a title. Two halves share an article's names and subject but no sentence, roughly as two
outlets' reports of one story do. A clusterer that keeps them apart will keep such reports
apart. The articles are read with `ferret parse`, so the feeds are read as the daemon reads
them. Items are written in date order, each pair at its article's date.
"""
import argparse
import glob
import html
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ferret", default=os.path.join(HERE, "..", "target", "release", "ferret"))
    parser.add_argument(
        "--corpus", default=os.path.join(HERE, "..", "..", "shared", "data", "feed-corpus", "real")
    )
    parser.add_argument("--min-words", type=int, default=200)
    args = parser.parse_args()

    items, skipped = [], []
    for path in sorted(glob.glob(os.path.join(args.corpus, "**", "*"), recursive=True)):
        if not os.path.isfile(path) or path.endswith((".md", ".txt")):
            continue
        run = subprocess.run([args.ferret, "parse", path], capture_output=True, text=True)
        if run.returncode != 0:
            skipped.append(path)
            continue
        for entry in json.loads(run.stdout).get("items", []):
            body = entry.get("content") or entry.get("summary") or ""
            words = html.unescape(re.sub(r"<[^>]+>", " ", body)).split()
            if len(words) < args.min_words or not entry.get("title"):
                continue
            label = str(len(items) // 2 + 1)
            date = entry.get("published") or entry.get("updated")
            if date is None:
                continue
            half = len(words) // 2
            for part, title, text in (("a", entry["title"], words[:half]), ("b", "", words[half:])):
                items.append({"id": label + part, "date": date, "title": title,
                              "text": " ".join(text), "cluster": label})
    items.sort(key=lambda item: item["date"])
    for item in items:
        print(json.dumps(item, ensure_ascii=False))
    print(f"{len(items) // 2} articles, {len(items)} items; {len(skipped)} files not parsed",
          file=sys.stderr)


if __name__ == "__main__":
    main()
