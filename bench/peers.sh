#!/usr/bin/env bash
# The side-by-side table of issue 21: staffcast, NATS and nchan, one server at a time, with the
# same load generator (staffcast-bench) and the same scenarios (SCENARIOS=compare: storm memory
# latency10k latency1k flatout-bounded), then staffcast's ratio to the best peer per row.
# bench/README.md (Peers) says how each peer is driven and why.
#
#   bench/peers.sh BIN_DIR          BIN_DIR holds release builds of staffcast and staffcast-bench
#   bench/peers.sh --install        installs nginx, libnginx-mod-nchan and nats-server (apt, root)
#   bench/peers.sh --check          exit 0 when the peers are installed, 3 when not (make bench)
#
# Environment: PEERS (default "staffcast nats nchan": which servers, in this order), every
# setting of staffcast-bench (DURATION, STORM_WINDOW, …), PEER_PORT (default 18110: nchan's
# HTTP port, NATS's websocket port; NATS's client port is PEER_PORT+1). Each peer's config and
# log go to a temporary folder that is removed at the end (PEERS_KEEP=1 keeps it).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
NCHAN_MODULE=/usr/lib/nginx/modules/ngx_nchan_module.so

peers_installed() {
  command -v nginx >/dev/null 2>&1 && [ -e "$NCHAN_MODULE" ] && command -v nats-server >/dev/null 2>&1
}

case "${1:-}" in
  --install)
    # Bench-only: never part of `make test` or scripts/install-deps.sh. policy-rc.d (containers)
    # or the stop below keeps the packaged nginx service from holding port 80.
    apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends nginx libnginx-mod-nchan nats-server ||
      { apt-get -o DPkg::Lock::Timeout=600 update && apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends nginx libnginx-mod-nchan nats-server; }
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet nginx 2>/dev/null; then
      systemctl disable --now nginx || true
    fi
    exit 0 ;;
  --check)
    if peers_installed; then exit 0; fi
    exit 3 ;;
  "" | -h | --help)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 0 ;;
esac

BIN_DIR="$1"
BENCH="$BIN_DIR/staffcast-bench"
if ! peers_installed; then
  echo "The peers are not installed (nginx with libnginx-mod-nchan, nats-server). Install them with:" >&2
  echo "  sudo bench/peers.sh --install" >&2
  exit 3
fi
PP=${PEER_PORT:-18110}
case "$PP" in 1808[0-9] | 1809[0-9]) echo "PEER_PORT $PP is in 18080-18099 (kept for staffcast)" >&2; exit 2 ;; esac
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

WORK=$(mktemp -d /tmp/staffcast-peers-XXXX)
chmod 755 "$WORK"
SERVER=""
stop_server() {
  if [ -n "$SERVER" ] && kill -0 "$SERVER" 2>/dev/null; then
    kill -TERM "$SERVER" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
  fi
  SERVER=""
}
cleanup() {
  stop_server
  if [ -z "${PEERS_KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
}
trap cleanup EXIT

wait_port() { # the server listens on 127.0.0.1:$1 within 10 s
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    kill -0 "$SERVER" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

run_nats() {
  local dir="$WORK/nats"
  mkdir -p "$dir"
  # Defaults but the websocket listener (no TLS, no compression: the bench client speaks plain
  # frames) and a client port for the publisher. No JetStream: core NATS keeps nothing.
  cat > "$dir/nats.conf" <<EOT
listen: 127.0.0.1:$((PP + 1))
max_connections: 100000
websocket {
  listen: "127.0.0.1:$PP"
  no_tls: true
  compression: false
}
EOT
  nats-server -c "$dir/nats.conf" > "$dir/nats.log" 2>&1 &
  SERVER=$!
  if ! wait_port "$PP" || ! wait_port $((PP + 1)); then echo "nats-server did not start:" >&2; tail -n 20 "$dir/nats.log" >&2; return 1; fi
  echo "nats-server $(nats-server --version 2>/dev/null | head -n 1), pid $SERVER, websocket :$PP, client :$((PP + 1))"
  "$BENCH" --server-kind nats --server "http://127.0.0.1:$PP" --publisher-port $((PP + 1)) --server-pid "$SERVER" \
    --scenarios "${SCENARIOS:-compare}" --results-file "$WORK/nats.tsv" || true
  stop_server
}

run_nchan() {
  local dir="$WORK/nchan"
  mkdir -p "$dir/tmp"
  chmod 777 "$dir/tmp"
  # One worker per core, as an nginx for realtime traffic is set up; keep-alive without a
  # request cap (the publisher posts thousands on one connection); nchan's defaults otherwise,
  # except that a new subscriber starts at the newest message (as staffcast's since_seq does).
  cat > "$dir/nginx.conf" <<EOT
load_module $NCHAN_MODULE;
worker_processes $(nproc);
worker_rlimit_nofile 65536;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 65536; }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  server {
    listen 127.0.0.1:$PP backlog=4096;
    location = /sub/bench {
      nchan_subscriber websocket;
      nchan_channel_id bench;
      nchan_subscriber_first_message newest;
    }
    location = /pub/bench {
      nchan_publisher;
      nchan_channel_id bench;
    }
  }
}
EOT
  nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' > "$dir/nginx.log" 2>&1 &
  SERVER=$!
  if ! wait_port "$PP"; then echo "nginx did not start:" >&2; tail -n 20 "$dir/error.log" "$dir/nginx.log" >&2; return 1; fi
  # The master and its workers: CPU and memory are their sum (memory as Pss: nchan's shared
  # memory counts once).
  local pids="$SERVER"
  for _ in $(seq 1 50); do
    pids="$SERVER"
    for w in $(pgrep -P "$SERVER"); do pids="$pids,$w"; done
    [ "$(echo "$pids" | tr ',' '\n' | wc -l)" -gt "$(nproc)" ] && break
    sleep 0.1
  done
  echo "nginx $(nginx -v 2>&1 | sed 's/.*\///') with nchan, pids $pids, :$PP"
  "$BENCH" --server-kind nchan --server "http://127.0.0.1:$PP" --server-pid "$pids" \
    --scenarios "${SCENARIOS:-compare}" --results-file "$WORK/nchan.tsv" || true
  stop_server
}

results=()
for peer in ${PEERS:-staffcast nats nchan}; do
  echo "=== $peer"
  case "$peer" in
    staffcast)
      # scripts/bench.sh starts staffcast on its own embedded cluster, as `make bench` does.
      SCENARIOS="${SCENARIOS:-compare}" RESULTS_FILE="$WORK/staffcast.tsv" "$HERE/../scripts/bench.sh" "$BIN_DIR" || true ;;
    nats) run_nats || true ;;
    nchan) run_nchan || true ;;
    *) echo "unknown peer $peer (staffcast, nats, nchan)" >&2; continue ;;
  esac
  if [ -s "$WORK/$peer.tsv" ]; then results+=("$peer=$WORK/$peer.tsv"); else echo "($peer: no results)"; fi
done
echo "machine: $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ${#results[@]} -gt 0 ]; then "$BENCH" --compare-results "${results[*]}"; fi
