#!/usr/bin/env python3
"""A labelled stream of long texts for `ferret cluster --eval`, made from the real feeds.

    scripts/article-halves.py [--ferret target/release/ferret] [--corpus DIR] [--min-words N]
                              [--days D] [--parts-from W] > halves.jsonl

No labelled stream with article texts is at hand (the standard benchmark's files are not
shipped: see ../shared/data/news-clustering/README.md), and every clustering threshold was
tuned on headlines. This stands in for one: each article of ../shared/data/feed-corpus/real
with at least N words of text (its content, else its summary; markup dropped) becomes two
items labelled alike, its title with the first half of its words, and the second half without
a title. Two halves share an article's names and subject but no sentence, roughly as two
outlets' reports of one story do. A clusterer that keeps them apart will keep such reports
apart. The articles are read with `ferret parse`, so the feeds are read as the daemon reads
them. Items are written in date order, each pair at its article's date.

The feeds' articles span 16 years, so a clusterer's window holds a few of them at a time.
With --days D the articles keep their order but are spread evenly over D days from
2014-03-01, as a news stream's dates are. With --parts-from W an article of W words or more
becomes a story of many items instead of two: parts of 150 words (a last part under 100 is
dropped), the first with the title, each at a time of its own drawn over the D days (seeded,
so the same file each time), or at the article's date without --days.
"""
import argparse
import datetime
import glob
import html
import json
import os
import random
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
    parser.add_argument("--days", type=float)
    parser.add_argument("--parts-from", type=int)
    args = parser.parse_args()

    articles, skipped = [], []
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
            date = entry.get("published") or entry.get("updated")
            if len(words) < args.min_words or not entry.get("title") or date is None:
                continue
            articles.append((date, entry["title"], words))
    articles.sort(key=lambda article: article[0])

    start = datetime.datetime(2014, 3, 1, tzinfo=datetime.timezone.utc)
    draw = random.Random(7)

    def when(i, date):
        """The time of article i's items (or of one part), as RFC 3339."""
        if args.days is None:
            return date
        at = start + datetime.timedelta(days=args.days * i / len(articles))
        return at.strftime("%Y-%m-%dT%H:%M:%SZ")

    items = []
    for i, (date, title, words) in enumerate(articles):
        label = str(i + 1)
        if args.parts_from is not None and len(words) >= args.parts_from:
            parts = [words[at:at + 150] for at in range(0, len(words), 150)]
            for k, part in enumerate(p for p in parts if len(p) >= 100):
                at = date
                if args.days is not None:
                    at = when(draw.random() * len(articles), date)
                items.append({"id": f"{label}p{k}", "date": at, "title": title if k == 0 else "",
                              "text": " ".join(part), "cluster": label})
            continue
        half = len(words) // 2
        for part, head, text in (("a", title, words[:half]), ("b", "", words[half:])):
            items.append({"id": label + part, "date": when(i, date), "title": head,
                          "text": " ".join(text), "cluster": label})
    items.sort(key=lambda item: item["date"])
    for item in items:
        print(json.dumps(item, ensure_ascii=False))
    stories = len({item["cluster"] for item in items})
    print(f"{len(articles)} articles, {len(items)} items in {stories} stories; "
          f"{len(skipped)} files not parsed", file=sys.stderr)

if __name__ == "__main__":
    main()
