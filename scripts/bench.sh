#!/usr/bin/env bash
# `make bench`: starts a release server on its own embedded cluster (fresh data dir), creates an
# event with a publisher and a subscriber user, and runs staffcast-bench against it.
# SUBSCRIBERS (default "1000 10000"), RATE (messages/s, default 10), DURATION (s, default 10).
set -euo pipefail
BIN_DIR="$1"
SC="$BIN_DIR/staffcast"
DATA=$(mktemp -d /tmp/staffcast-bench-XXXX)
chmod 755 "$DATA" # the embedded cluster may run as the postgres user
PORT=${PORT:-18080}
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$DATA"' EXIT
cat > "$DATA/bench.yaml" <<EOT
send_rate_per_second: 100000
send_burst: 100000
log_level: warning
EOT
export STAFFCAST_DATA_DIR="$DATA"
EVENT=$("$SC" admin event create --name Bench)
PUB=$("$SC" admin user create --name Publisher)
SUB=$("$SC" admin user create --name Subscriber)
"$SC" admin grant --event "$EVENT" --user "$PUB" --level owner 2>/dev/null
"$SC" admin grant --event "$EVENT" --user "$SUB" --level staff 2>/dev/null
PT=$("$SC" admin token issue --user "$PUB")
ST=$("$SC" admin token issue --user "$SUB")
"$SC" serve --config "$DATA/bench.yaml" --listen "127.0.0.1:$PORT" > "$DATA/serve.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done
echo "machine: $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB; server pid $SERVER"
for N in ${SUBSCRIBERS:-1000 10000}; do
  echo "== $N subscribers, ${RATE:-10} msg/s for ${DURATION:-10} s"
  "$BIN_DIR/staffcast-bench" --server "http://127.0.0.1:$PORT" --server-pid "$SERVER" --event "$EVENT" \
    --subscriber-token "$ST" --publisher-token "$PT" --subscribers "$N" --rate "${RATE:-10}" --duration "${DURATION:-10}"
done
