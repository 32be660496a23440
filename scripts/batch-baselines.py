#!/usr/bin/env python3
"""Batch and nearest-neighbour baselines for `ferret cluster --eval`, on the same labelled
files: what methods that are not ferret's get from the same headlines.

    pip install scikit-learn nltk
    scripts/batch-baselines.py [DATA_DIR]   # default ../shared/data/news-clustering/uci-news-aggregator-subset

Every item is a tf-idf vector of its title (Snowball English stems, sublinear tf, l2 norm;
idf over the whole file, which a stream does not know: a favour to the baselines). Two
methods, each over a grid of thresholds, scored by BCubed P / R / F1 at the story level:

- agglomerative clustering with average linkage on cosine distance (offline: it sees every
  item before it decides);
- nearest neighbours online: each item in turn (date order, then shuffled with seed 1) joins
  the story with the largest summed similarity among its k most similar earlier items at or
  above the threshold, else starts one.

The best F1 of each method over its grid is chosen on the file itself (more favour).
"""
import collections
import json
import re
import sys

import numpy as np
from nltk.stem.snowball import SnowballStemmer
from sklearn.cluster import AgglomerativeClustering
from sklearn.feature_extraction.text import TfidfVectorizer

STOP = set("a an the of to in on for and or at by with from as is are was be it its this that s"
           " after over up new".split())
stemmer = SnowballStemmer("english")


def tokens(text):
    return [stemmer.stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP]


def bcubed(gold, pred):
    pairs = collections.Counter(zip(gold, pred))
    a, b, n = collections.Counter(gold), collections.Counter(pred), len(gold)
    r = sum(c * c / a[g] for (g, _), c in pairs.items()) / n
    p = sum(c * c / b[q] for (_, q), c in pairs.items()) / n
    return p, r, 2 * p * r / (p + r)


def nearest(similarity, order, k, threshold):
    label, seen, stories = {}, [], 0
    for i in order:
        votes = collections.Counter()
        if seen:
            sims = similarity[i, seen]
            for t in np.argsort(-sims)[:k]:
                if sims[t] >= threshold:
                    votes[label[seen[t]]] += sims[t]
        if votes:
            label[i] = votes.most_common(1)[0][0]
        else:
            label[i] = stories
            stories += 1
        seen.append(i)
    return [label[i] for i in range(len(order))]


def report(label, runs):
    """Prints the run of `runs` (each a BCubed triple and its setting) with the best F1."""
    (p, r, f), setting = max(runs, key=lambda run: run[0][2])
    print(f"{label}, best {setting}: BCubed P / R / F1 {p:.3f} / {r:.3f} / {f:.3f}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/news-clustering/uci-news-aggregator-subset"
    for name in ("dev", "test"):
        with open(f"{root}/{name}.jsonl") as f:
            docs = [json.loads(line) for line in f]
        docs.sort(key=lambda d: d["date"])
        gold = [d["cluster"] for d in docs]
        vectors = TfidfVectorizer(tokenizer=tokens, lowercase=False, sublinear_tf=True,
                                  token_pattern=None).fit_transform([d["title"] for d in docs])
        report(f"{name}: average linkage", (
            (bcubed(gold, AgglomerativeClustering(n_clusters=None, distance_threshold=t,
                                                  metric="cosine", linkage="average")
                    .fit(vectors.toarray()).labels_), f"distance {t}")
            for t in (0.8, 0.85, 0.9, 0.93, 0.95, 0.97)
        ))
        similarity = (vectors @ vectors.T).toarray()
        np.fill_diagonal(similarity, 0)
        shuffled = list(range(len(docs)))
        np.random.default_rng(1).shuffle(shuffled)
        for order_name, order in (("date order", list(range(len(docs)))), ("shuffled", shuffled)):
            report(f"{name}: nearest neighbours, {order_name}", (
                (bcubed(gold, nearest(similarity, order, k, t)), f"k {k}, threshold {t}")
                for k in (1, 3, 7) for t in (0.06, 0.08, 0.1, 0.12, 0.15, 0.18, 0.25)
            ))


if __name__ == "__main__":
    main()
