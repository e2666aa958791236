#!/usr/bin/env bash
# Faults beyond one machine, simulated on this one (issue 19): three staffcast servers on one
# PostgreSQL, each in its own network namespace, subscribers and a publisher in a fifth, all on
# one bridge (198.18.0.0/24: the benchmarking range, our own test hosts only). While the
# publisher sends, the script breaks things in this order:
#
#   +8 s   5 % packet loss on the database's link, both ways, for 17 s (nftables)
#   +12 s  kill -9 server a; restarted 4 s later
#   +22 s  kill -9 the PostgreSQL postmaster; restarted 5 s later (crash recovery)
#   +33 s  server b cut off from the database for 10 s (every packet dropped)
#   +48 s  SIGTERM server c (graceful: close 1001); restarted 3 s later
#
# Then bench/faults_clients.py checks that nothing acknowledged was lost, nothing was
# delivered twice or out of order, and every subscriber converged. Run as root, by hand:
#
#   bench/faults.sh [path/to/staffcast]       (default: .build/release/staffcast, else .build/debug)
#   SUBSCRIBERS=300 MESSAGES=900 RATE=15 bench/faults.sh
#
# tc netem is not in this machine's kernel, so loss is nftables' random drop and delay is not
# simulated. Exit status 0 only on PASS. Everything it made is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-}"
if [ -z "$BIN" ]; then
  for b in .build/release/staffcast .build/debug/staffcast; do [ -x "$b" ] && { BIN="$b"; break; }; done
fi
[ -x "${BIN:-}" ] || { echo "faults: no staffcast binary (swift build first, or pass its path)" >&2; exit 2; }
BIN="$(realpath "$BIN")"
[ "$(id -u)" -eq 0 ] || { echo "faults: needs root (network namespaces)" >&2; exit 2; }
for tool in ip nft runuser python3; do command -v $tool >/dev/null || { echo "faults: needs $tool (apt-get install iproute2 nftables)" >&2; exit 2; }; done
python3 -c "import websockets" 2>/dev/null || { echo "faults: needs python websockets (scripts/install-deps.sh)" >&2; exit 2; }
PGBIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"

SUBSCRIBERS="${SUBSCRIBERS:-150}"
MESSAGES="${MESSAGES:-600}"
RATE="${RATE:-10}"
P=scf            # namespace and link prefix
NET=198.18.0
declare -A IP=([db]=$NET.1 [a]=$NET.2 [b]=$NET.3 [c]=$NET.4 [cl]=$NET.10)
WORK="$(mktemp -d /tmp/staffcast-faults.XXXX)"
chmod 755 "$WORK"
declare -A SERVER_PID=()
PG_PID=""

log() { printf '%s faults: %s\n' "$(date +%T)" "$*"; }

# kill -9 of this cluster only (its postmaster and its children; other clusters on this machine
# also run as postgres): the postmaster's pid is the first line of postmaster.pid.
kill_pg() {
  local pm
  pm=$(head -n 1 "$WORK/pg/postmaster.pid" 2>/dev/null) || return 0
  [ -n "$pm" ] || return 0
  local kids
  kids=$(pgrep -P "$pm" | tr '\n' ' ' || true)
  # shellcheck disable=SC2086
  kill -9 "$pm" $kids 2>/dev/null || true
  for _ in $(seq 50); do
    local alive=0
    for p in $pm $kids; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
}

cleanup() {
  set +e
  for s in "${!SERVER_PID[@]}"; do kill -9 "${SERVER_PID[$s]}" 2>/dev/null; done
  kill_pg
  for n in db a b c cl; do ip netns del $P-$n 2>/dev/null; done
  ip link del $P-br 2>/dev/null
  [ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

# --- the network: one bridge, one namespace per host --------------------------------------
ip link add $P-br type bridge
ip link set $P-br up
for n in db a b c cl; do
  ip netns add $P-$n
  ip link add $P-$n-h type veth peer name $P-$n-n
  ip link set $P-$n-n netns $P-$n
  ip link set $P-$n-h master $P-br
  ip link set $P-$n-h up
  ip netns exec $P-$n ip addr add ${IP[$n]}/24 dev $P-$n-n
  ip netns exec $P-$n ip link set $P-$n-n up
  ip netns exec $P-$n ip link set lo up
done
ip addr add $NET.254/24 dev $P-br   # the host, for set-up only
ip netns exec $P-db nft add table inet faults
ip netns exec $P-db nft add chain inet faults in '{ type filter hook input priority 0; }'
ip netns exec $P-db nft add chain inet faults out '{ type filter hook output priority 0; }'

# --- PostgreSQL in its own namespace ------------------------------------------------------
install -d -o postgres -m 700 "$WORK/pg"
runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/pg" -A trust -U postgres >/dev/null
cat >> "$WORK/pg/postgresql.conf" <<EOF
listen_addresses = '${IP[db]}'
unix_socket_directories = '$WORK/pg'
max_connections = 200
fsync = on
EOF
echo "host all all $NET.0/24 trust" >> "$WORK/pg/pg_hba.conf"
start_pg() {
  ip netns exec $P-db runuser -u postgres -- "$PGBIN/postgres" -D "$WORK/pg" > "$WORK/pg.log" 2>&1 &
  PG_PID=$!
  disown "$PG_PID"
  for _ in $(seq 100); do "$PGBIN/pg_isready" -q -h ${IP[db]} && return; sleep 0.1; done
  echo "faults: PostgreSQL did not start ($WORK/pg.log)" >&2; exit 1
}
start_pg
"$PGBIN/createdb" -h ${IP[db]} -U postgres staffcast
OWNER_URL="postgresql://postgres@${IP[db]}:5432/staffcast"
SERVER_URL="postgresql://staffcast_server@${IP[db]}:5432/staffcast"
"$BIN" migrate --database-url "$OWNER_URL" > "$WORK/migrate.log" 2>&1
admin() { "$BIN" admin "$@" --database-url "$OWNER_URL" 2>>"$WORK/admin.log"; }
EVENT=$(admin event create --name "Fault Fest")
ORG=$(admin user create --name "Olivia Organiser")
STAFF=$(admin user create --name "Sam Staff")
admin grant --event "$EVENT" --user "$ORG" --level owner >/dev/null
admin grant --event "$EVENT" --user "$STAFF" --level staff >/dev/null
ORG_TOKEN=$(admin token issue --user "$ORG")
STAFF_TOKEN=$(admin token issue --user "$STAFF")

# --- three servers ------------------------------------------------------------------------
cat > "$WORK/serve.yaml" <<EOF
send_burst: 100000
send_rate_per_second: 100000
max_connections_per_user: 100000
listener_poll_interval: 1
shutdown_grace: 2
ops_token: "fault-run-ops-token-0123456789"
EOF
start_server() {
  local s=$1
  ip netns exec $P-$s "$BIN" serve --config "$WORK/serve.yaml" --listen ${IP[$s]}:8080 \
    --database-url "$SERVER_URL" >> "$WORK/serve-$s.log" 2>&1 &
  SERVER_PID[$s]=$!
  disown "${SERVER_PID[$s]}"   # killed on purpose: no "Killed" notices from the shell
  for _ in $(seq 100); do
    ip netns exec $P-cl curl -s -o /dev/null --max-time 1 http://${IP[$s]}:8080/healthz && return
    sleep 0.1
  done
  echo "faults: server $s did not start ($WORK/serve-$s.log)" >&2; exit 1
}
for s in a b c; do start_server $s; done
log "3 servers up on ${IP[a]}, ${IP[b]}, ${IP[c]}; PostgreSQL on ${IP[db]}; $SUBSCRIBERS subscribers, $MESSAGES messages at $RATE/s"

# --- the run ------------------------------------------------------------------------------
ip netns exec $P-cl python3 bench/faults_clients.py \
  --servers "http://${IP[a]}:8080,http://${IP[b]}:8080,http://${IP[c]}:8080" \
  --event "$EVENT" --publisher-token "$ORG_TOKEN" --staff-token "$STAFF_TOKEN" \
  --subscribers "$SUBSCRIBERS" --messages "$MESSAGES" --rate "$RATE" > "$WORK/clients.out" 2>&1 &
CLIENTS=$!
T0=$(date +%s.%N)
at() { local wait; wait=$(python3 -c "import time; print(max(0, $T0 + $1 - time.time()))"); sleep "$wait"; }

at 8;  log "5 % loss on the database link";  ip netns exec $P-db nft add rule inet faults in numgen random mod 100 '<' 5 drop
                                             ip netns exec $P-db nft add rule inet faults out numgen random mod 100 '<' 5 drop
at 12; log "kill -9 server a";               kill -9 "${SERVER_PID[a]}"
at 16; log "restart server a";               start_server a
at 22; log "kill -9 PostgreSQL";             kill_pg
at 25; log "loss off";                       ip netns exec $P-db nft flush chain inet faults in; ip netns exec $P-db nft flush chain inet faults out
at 27; log "restart PostgreSQL";             start_pg
at 33; log "server b cut off from the database"
       ip netns exec $P-db nft add rule inet faults in ip saddr ${IP[b]} drop
       ip netns exec $P-db nft add rule inet faults out ip daddr ${IP[b]} drop
at 43; log "server b back";                  ip netns exec $P-db nft flush chain inet faults in; ip netns exec $P-db nft flush chain inet faults out
at 48; log "SIGTERM server c";               kill -TERM "${SERVER_PID[c]}"
       for _ in $(seq 100); do kill -0 "${SERVER_PID[c]}" 2>/dev/null || break; sleep 0.1; done
at 51; log "restart server c";               start_server c

status=0
wait $CLIENTS || status=$?
cat "$WORK/clients.out"
for s in a b c; do
  log "server $s: $(grep -c -i 'error' "$WORK/serve-$s.log" || true) error lines in its log"
done
[ $status -eq 0 ] || { KEEP=1; log "FAIL; logs kept in $WORK"; }
exit $status
