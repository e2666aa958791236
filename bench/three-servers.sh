#!/usr/bin/env bash
# Issue 21 item 7 (docs/scaling.md): several staffcast servers on one database.
#   1. One server: sends committed one at a time (sendrate1: each send is its own commit) and
#      flat out from one WebSocket (sendrate-ws); PostgreSQL's CPU per committed send.
#   2. THREE (3) servers on the same cluster, the same runs (the other servers only listen:
#      every commit wakes their listener, which reads the change logs), then `three-servers`:
#      THREE_SUBSCRIBERS spread over them, one publisher on the first, deliveries per server.
#   3. The cost per commit of each extra listening server: PostgreSQL (NOTIFY delivery and the
#      listener's snapshot read) and the listening server's own CPU.
#
#   bench/three-servers.sh BIN_DIR      BIN_DIR holds release builds of staffcast and staffcast-bench
#
# Environment: THREE (servers in step 2, default 3), PORT (default 18080: the servers use
# PORT … PORT+THREE-1), DURATION, THREE_SUBSCRIBERS, THREE_RATE (staffcast-bench --help).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BIN_DIR="$1"
N=${THREE:-3}
WORK=$(mktemp -d /tmp/staffcast-three-XXXX)
trap 'rm -rf "$WORK"' EXIT

echo "=== one server: sendrate1 sendrate-ws"
SERVERS=1 SCENARIOS="sendrate1 sendrate-ws" RESULTS_FILE="$WORK/one.tsv" "$HERE/../scripts/bench.sh" "$BIN_DIR" || true
echo "=== $N servers on one database: sendrate1 sendrate-ws three-servers"
SERVERS=$N SCENARIOS="sendrate1 sendrate-ws three-servers" RESULTS_FILE="$WORK/many.tsv" "$HERE/../scripts/bench.sh" "$BIN_DIR" || true

get() { awk -F'\t' -v k="$2" '$1 == k { print $2 }' "$1" 2>/dev/null; }
echo
echo "Cost per commit of NOTIFY and the change-log read (1 vs $N listening servers; one send = one commit in sendrate1):"
printf '| run | servers | sends/s | PostgreSQL CPU per send | publisher'"'"'s server CPU per send | other servers CPU per send |\n|---|---|---|---|---|---|\n'
for run in sendrate1 sendrate_ws; do
  for f in one many; do
    [ -s "$WORK/$f.tsv" ] || continue
    servers=1; [ "$f" = many ] && servers=$N
    printf '| %s | %s | %.0f | %.1f µs | %.1f µs | %s |\n' "$run" "$servers" "$(get "$WORK/$f.tsv" $run.rate)" \
      "$(get "$WORK/$f.tsv" $run.pg_us)" "$(get "$WORK/$f.tsv" $run.server_us)" \
      "$(o=$(get "$WORK/$f.tsv" $run.other_servers_us); [ -n "$o" ] && printf '%.1f µs' "$o" || echo —)"
  done
done
if [ -s "$WORK/one.tsv" ] && [ -s "$WORK/many.tsv" ]; then
  awk -F'\t' -v n="$N" '
    FNR == NR { one[$1] = $2; next } { many[$1] = $2 }
    END {
      if (one["sendrate1.pg_us"] == "" || many["sendrate1.pg_us"] == "") exit
      pg = (many["sendrate1.pg_us"] - one["sendrate1.pg_us"]) / (n - 1)
      ls = many["sendrate1.other_servers_us"] / (n - 1)
      printf "\nPer commit, each extra listening server costs PostgreSQL %.1f µs of CPU and itself %.1f µs", pg, ls
      printf " (docs/scaling.md: the formula)\n"
    }' "$WORK/one.tsv" "$WORK/many.tsv"
fi
