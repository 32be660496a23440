#!/bin/sh
# The discovery loop on topics it was not tuned on, against breadth-first from the same likes:
# for each topic (a file-name prefix of the PostgreSQL documentation), the likes are the
# topic's first three files by name — picked mechanically, not by hand — and the relevant
# pages are the topic's files.
#
#   scripts/topics.sh [BUDGET] [TOPIC ...]
#
# Needs the corpus served (scripts/corpus.sh) and a release build (cargo build --release).
# BASE overrides the corpus URL (default http://127.0.0.1:8088/).
set -eu

DOCS=/usr/share/doc/postgresql-doc-15/html
BASE=${BASE:-http://127.0.0.1:8088/}
FERRET=${FERRET:-target/release/ferret}
BUDGET=${1:-200}
[ $# -gt 0 ] && shift
TOPICS=${*:-catalog ecpg libpq functions sql runtime-config infoschema}

[ -d "$DOCS" ] || { echo "no corpus at $DOCS: run scripts/corpus.sh" >&2; exit 1; }
[ -x "$FERRET" ] || { echo "no $FERRET: run cargo build --release" >&2; exit 1; }
likes=$(mktemp)
trap 'rm -f "$likes"' EXIT

for topic in $TOPICS; do
    ls "$DOCS" | grep "^$topic" | head -n 3 > "$likes"
    pages=$(ls "$DOCS" | grep -c "^$topic" || true)
    echo "## $topic ($pages files; likes: $(tr '\n' ' ' < "$likes"))"
    "$FERRET" bench discover --base "$BASE" --likes "$likes" --relevant "$topic" \
        --budget "$BUDGET" | grep -E '^\|'
    echo
done
