#!/bin/sh
# The local crawl corpus: the PostgreSQL 15 documentation (1,173 files) served by nginx on
# 127.0.0.1, for `ferret bench bfs` and crawler tests.
#
#   scripts/corpus.sh [PORT]   install what is missing (Debian), start nginx, print the base URL
#   scripts/corpus.sh stop     stop it
#
# nginx runs with its own config, pid and logs under $FERRET_CORPUS_DIR (default
# ${XDG_RUNTIME_DIR:-/tmp}/ferret-corpus); the system nginx config is not used or touched.
# Installing needs root (apt-get); when everything is present the script does not need it.
set -eu

DOCS=/usr/share/doc/postgresql-doc-15/html
RUN_DIR=${FERRET_CORPUS_DIR:-${XDG_RUNTIME_DIR:-/tmp}/ferret-corpus}
PID_FILE=$RUN_DIR/nginx.pid

stop() {
    if [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
        kill "$(cat "$PID_FILE")"
        echo "corpus server stopped" >&2
    else
        echo "corpus server not running" >&2
    fi
    rm -f "$PID_FILE"
}

if [ "${1:-}" = "stop" ]; then
    stop
    exit 0
fi

PORT=${1:-8088}
case $PORT in
    ''|*[!0-9]*) echo "usage: $0 [PORT] | stop" >&2; exit 2 ;;
esac

# Install what is missing, once.
missing=""
[ -x /usr/sbin/nginx ] || missing="$missing nginx-light"
[ -f "$DOCS/index.html" ] || missing="$missing postgresql-doc-15"
command -v wget >/dev/null 2>&1 || missing="$missing wget"
if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "need root to install:$missing" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    # shellcheck disable=SC2086 # word splitting wanted
    apt-get install -y --no-install-recommends $missing
    # The package starts the system nginx on port 80; this corpus does not need it.
    if command -v systemctl >/dev/null 2>&1; then
        systemctl disable --now nginx >/dev/null 2>&1 || true
    fi
fi

mkdir -p "$RUN_DIR/tmp"
if [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    stop
fi

MIME=/etc/nginx/mime.types
[ -f "$MIME" ] || MIME=""
cat >"$RUN_DIR/nginx.conf" <<EOF
daemon on;
worker_processes 2;
pid $PID_FILE;
error_log $RUN_DIR/error.log warn;
events { worker_connections 1024; }
http {
    ${MIME:+include $MIME;}
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    keepalive_timeout 65;
    client_body_temp_path $RUN_DIR/tmp/body;
    proxy_temp_path $RUN_DIR/tmp/proxy;
    fastcgi_temp_path $RUN_DIR/tmp/fastcgi;
    uwsgi_temp_path $RUN_DIR/tmp/uwsgi;
    scgi_temp_path $RUN_DIR/tmp/scgi;
    server {
        listen 127.0.0.1:$PORT;
        root $DOCS;
        index index.html;
    }
}
EOF

/usr/sbin/nginx -p "$RUN_DIR" -c "$RUN_DIR/nginx.conf" -e "$RUN_DIR/error.log"
echo "http://127.0.0.1:$PORT/"
