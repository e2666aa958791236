#!/usr/bin/env bash
# `make bench`: starts a release server on its own embedded cluster (fresh data dir), creates an
# event with a publisher (owner) and a subscriber (staff), and runs staffcast-bench against it:
# the scenarios of issue 7, one table at the end (bench/README.md).
#
#   scripts/bench.sh BIN_DIR        BIN_DIR holds release builds of staffcast and staffcast-bench
#
# Environment: SCENARIOS (default "storm memory latency10k latency1k flatout-ws flatout-http"),
# DURATION, STORM_WINDOW, WS_WINDOW, HTTP_CONNECTIONS, HTTP_PIPELINE, … (staffcast-bench --help),
# PORT (default 18080), STAFFCAST_BIN (a server binary other than BIN_DIR/staffcast). The server's log is kept in ${TMPDIR:-/tmp}/staffcast-bench-serve.log.
set -euo pipefail
BIN_DIR="$1"
SC="${STAFFCAST_BIN:-$BIN_DIR/staffcast}" # STAFFCAST_BIN: bench another server binary (e.g. an older build)
BENCH="$BIN_DIR/staffcast-bench"
PORT=${PORT:-18080}
SERVER_LOG_COPY="${TMPDIR:-/tmp}/staffcast-bench-serve.log"

# 10,000 connections on each side (the bench client and the server) need more descriptors.
# Without CAP_SYS_RESOURCE (containers) the hard limit caps it; 10,000 + some is enough.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

DATA=$(mktemp -d /tmp/staffcast-bench-XXXX)
chmod 755 "$DATA" # the embedded cluster may run as the postgres user
export STAFFCAST_DATA_DIR="$DATA"
SERVER=""
cleanup() {
  if [ -n "$SERVER" ] && kill -0 "$SERVER" 2>/dev/null; then
    # A graceful stop, a second signal (exit at once), then KILL for a server that hangs.
    for sig in TERM TERM KILL; do
      kill -"$sig" "$SERVER" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.2; done
      kill -0 "$SERVER" 2>/dev/null || break
      echo "the server did not stop within 10 s of SIG$sig" >&2
    done
    wait "$SERVER" 2>/dev/null || true
  fi
  "$SC" cluster stop >/dev/null 2>&1 || true # serve stops it too; this covers a failed start
  cp "$DATA/serve.log" "$SERVER_LOG_COPY" 2>/dev/null || true
  rm -rf "$DATA"
}
trap cleanup EXIT

OPS_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
cat > "$DATA/bench.yaml" <<EOT
# The bench's publisher sends thousands of messages a second, many in flight at once.
send_rate_per_second: 100000
send_burst: 100000
max_in_flight_per_connection: 10000
log_level: warning
# Lets the bench read /v1/status (open connections) between scenarios.
ops_token: "$OPS_TOKEN"
EOT
# Servers with connection caps would refuse most of the bench's subscribers (one token for all).
# Older servers reject unknown keys, so add each cap only when this binary accepts it.
for key in max_connections_per_user max_connections; do
  cp "$DATA/bench.yaml" "$DATA/probe.yaml"
  echo "$key: 1000000" >> "$DATA/probe.yaml"
  if "$SC" serve --config "$DATA/probe.yaml" --check-config >/dev/null 2>&1; then
    echo "$key: 1000000" >> "$DATA/bench.yaml"
  fi
done
rm -f "$DATA/probe.yaml"

# The admin commands log each start and stop of the embedded cluster: keep that out of the way.
admin() {
  if ! "$SC" admin "$@" 2>>"$DATA/admin.log"; then
    echo "staffcast admin $1 $2 failed:" >&2
    tail -n 20 "$DATA/admin.log" >&2
    return 1
  fi
}
EVENT=$(admin event create --name Bench)
PUB=$(admin user create --name Publisher)
SUB=$(admin user create --name Subscriber)
admin grant --event "$EVENT" --user "$PUB" --level owner >/dev/null
admin grant --event "$EVENT" --user "$SUB" --level staff >/dev/null
PT=$(admin token issue --user "$PUB")
ST=$(admin token issue --user "$SUB")

"$SC" serve --config "$DATA/bench.yaml" --listen "127.0.0.1:$PORT" > "$DATA/serve.log" 2>&1 &
SERVER=$!
ready=no
for _ in $(seq 1 150); do
  if curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; then ready=yes; break; fi
  kill -0 "$SERVER" 2>/dev/null || break
  sleep 0.2
done
if [ "$ready" != yes ]; then
  echo "the server did not become ready; its log:" >&2
  tail -n 40 "$DATA/serve.log" >&2
  exit 1
fi
PG_PID=0
CLUSTER_DIR=$("$SC" cluster status 2>/dev/null | sed -n 's/^running: //p')
if [ -n "$CLUSTER_DIR" ] && [ -r "$CLUSTER_DIR/postmaster.pid" ]; then PG_PID=$(head -n 1 "$CLUSTER_DIR/postmaster.pid"); fi

echo "machine: $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB, $(uname -r); ulimit -n $(ulimit -n)"
echo "server pid $SERVER (VmRSS $(awk '/VmRSS/{print $2" "$3}' /proc/$SERVER/status)), PostgreSQL postmaster pid $PG_PID"
echo "bench config: $(grep -v '^#' "$DATA/bench.yaml" | grep -v ops_token | tr '\n' ' ')"
status=0
"$BENCH" --server "http://127.0.0.1:$PORT" --server-pid "$SERVER" --postgres-pid "$PG_PID" --event "$EVENT" \
  --subscriber-token "$ST" --publisher-token "$PT" --ops-token "$OPS_TOKEN" || status=$?
if ! kill -0 "$SERVER" 2>/dev/null; then
  echo "!! the server exited during the bench; the end of its log ($SERVER_LOG_COPY):"
  tail -n 30 "$DATA/serve.log"
  status=1
elif [ -s "$DATA/serve.log" ]; then
  echo "server log: $(wc -l < "$DATA/serve.log") lines of warnings and errors (kept in $SERVER_LOG_COPY)"
fi
exit $status
