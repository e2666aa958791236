#!/usr/bin/env bash
# `make bench`: starts a release server on its own embedded cluster (fresh data dir), creates an
# event with a publisher (owner) and a subscriber (staff), and runs staffcast-bench against it:
# the scenarios of issues 7 and 8, one table at the end (bench/README.md).
#
#   scripts/bench.sh BIN_DIR        BIN_DIR holds release builds of staffcast and staffcast-bench
#
# Environment: SCENARIOS (default: all of them), DURATION, STORM_WINDOW, WS_WINDOW,
# HTTP_CONNECTIONS, HTTP_PIPELINE, READSTORM_N, … (staffcast-bench --help), PORT (default 18080),
# STAFFCAST_BIN (a server binary other than BIN_DIR/staffcast), SERVERS (default 1: with N > 1,
# N servers on the one cluster, on PORT … PORT+N-1; the publisher uses the first and the
# subscribers spread over all: bench/three-servers.sh), TLS=1 (the server on a self-signed
# certificate, every scenario over wss and https), PERF_RECORD / PERF_STAT (a file:
# `perf record -g` / `perf stat` of the (first) server process during the bench), PG_STATEMENTS
# (a file: PostgreSQL's own time per statement during the bench, nested statements of functions
# and triggers included, from pg_stat_statements; docs/performance.md). The server's log is kept in
# ${TMPDIR:-/tmp}/staffcast-bench-serve.log.
#
# The read storm needs READSTORM_N (1,000) distinct staff users with their own tokens. They are
# made in one SQL transaction (psql against the cluster: 10,000 in seconds) and kept:
# the stopped cluster (events, publisher, subscriber, staff users) and their tokens go to
# BENCH_CACHE_DIR (${TMPDIR:-/tmp}/staffcast-bench-cache, keyed by sql/), and the next run starts
# from a copy of it, topping it up when it holds fewer than READSTORM_N. Without the read storm
# the cluster is made fresh and nothing is cached. The staff users have an event of their own
# ("Read storm", owned by the publisher), so the other scenarios' event keeps a roster of two.
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
SERVERS=${SERVERS:-1}
EXTRA_SERVERS=() # SERVERS > 1: the others, on PORT+1 …
CACHE_NEW=""
cleanup() {
  for pid in "${EXTRA_SERVERS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${EXTRA_SERVERS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
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
  if [ -n "$CACHE_NEW" ]; then rm -rf "$CACHE_NEW"; fi
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
# The reply/answer limit likewise: the answer storm answers once per user and round.
for setting in max_connections_per_user:1000000 max_connections:1000000 reply_burst:100000 reply_rate_per_minute:6000000; do
  cp "$DATA/bench.yaml" "$DATA/probe.yaml"
  echo "${setting%%:*}: ${setting#*:}" >> "$DATA/probe.yaml"
  if "$SC" serve --config "$DATA/probe.yaml" --check-config >/dev/null 2>&1; then
    echo "${setting%%:*}: ${setting#*:}" >> "$DATA/bench.yaml"
  fi
done
rm -f "$DATA/probe.yaml"
# TLS=1: the same scenarios over wss/https (a throwaway certificate; the bench does not verify it).
SCHEME=http
if [ -n "${TLS:-}" ] && [ "${TLS:-}" != 0 ]; then
  "$(dirname "$0")/tls-selfsigned.sh" "$DATA/tls"
  printf 'tls_cert: "%s"\ntls_key: "%s"\n' "$DATA/tls/server.pem" "$DATA/tls/server.key" >> "$DATA/bench.yaml"
  SCHEME=https
fi

# The admin commands log each start and stop of the embedded cluster: keep that out of the way.
admin() {
  if ! "$SC" admin "$@" 2>>"$DATA/admin.log"; then
    echo "staffcast admin $1 $2 failed:" >&2
    tail -n 20 "$DATA/admin.log" >&2
    return 1
  fi
}

# Is the read storm among the scenarios? (the bench's default is every scenario)
READSTORM=no
case " $(echo "${SCENARIOS:-all}" | tr ',' ' ') " in *" readstorm "* | *" answerstorm "* | *" all "* | *" durable "*) READSTORM=yes ;; esac
# READSTORM_N may be a list ("1000 3000": one storm each): the users are made for the largest.
READSTORM_MAX=$(echo "${READSTORM_N:-1000}" | tr -d '_' | tr ', ' '\n\n' | grep -E '^[0-9]+$' | sort -n | tail -n 1 || true)
READSTORM_MAX=${READSTORM_MAX:-1000}
CACHE_ROOT="${BENCH_CACHE_DIR:-${TMPDIR:-/tmp}/staffcast-bench-cache}"
SQL_DIR="${STAFFCAST_SQL_DIR:-$(cd "$(dirname "$0")/.." && pwd)/sql}"
CACHE=""
if [ "$READSTORM" = yes ]; then
  # Keyed by the schema: a cluster migrated by other sql files is not reused.
  CACHE="$CACHE_ROOT/v3-$(cat "$SQL_DIR"/*.sql 2>/dev/null | sha256sum | cut -c1-16)"
  # Another binary (STAFFCAST_BIN, an older build for A/B) may know another schema, and would
  # refuse a cluster this checkout's migrations went past: it gets a cache of its own.
  if [ -n "${STAFFCAST_BIN:-}" ]; then CACHE="$CACHE-bin-$(sha256sum "$SC" | cut -c1-12)"; fi
fi
TOKENS="$DATA/readstorm.tokens"
have_tokens() { if [ -s "$TOKENS" ]; then wc -l < "$TOKENS"; else echo 0; fi; }

FROM_CACHE=no
if [ -n "$CACHE" ] && [ -d "$CACHE/postgres" ] && [ -s "$CACHE/ids.env" ] && [ ! -e "$DATA/cluster-location" ]; then
  # A copy of the cached (stopped) cluster; its socket moves into this data dir (the last
  # setting in postgresql.conf wins).
  cp -a "$CACHE/postgres" "$DATA/postgres"
  rm -f "$DATA/postgres/postmaster.pid"
  printf "\nunix_socket_directories = '%s'\n" "$DATA/postgres" >> "$DATA/postgres/postgresql.conf"
  cp "$CACHE/readstorm.tokens" "$TOKENS" 2>/dev/null || true
  if "$SC" cluster start >/dev/null 2>>"$DATA/admin.log"; then
    # shellcheck disable=SC1091
    . "$CACHE/ids.env"
    FROM_CACHE=yes
    echo "readstorm: from the cached cluster in $CACHE ($(have_tokens) staff users with tokens)"
  else
    echo "readstorm: the cached cluster in $CACHE did not start; making a fresh one" >&2
    "$SC" cluster stop >/dev/null 2>&1 || true
    rm -rf "$DATA/postgres" "$TOKENS"
  fi
fi
if [ "$FROM_CACHE" = no ]; then
  # Started once here, so the admin commands below do not each start and stop it.
  "$SC" cluster start >/dev/null 2>>"$DATA/admin.log" || true
  EVENT=$(admin event create --name Bench)
  PUB=$(admin user create --name Publisher)
  SUB=$(admin user create --name Subscriber)
  admin grant --event "$EVENT" --user "$PUB" --level owner >/dev/null
  admin grant --event "$EVENT" --user "$SUB" --level staff >/dev/null
  PT=$(admin token issue --user "$PUB")
  ST=$(admin token issue --user "$SUB")
  RS_EVENT=""
  if [ "$READSTORM" = yes ]; then
    RS_EVENT=$(admin event create --name "Read storm")
    admin grant --event "$RS_EVENT" --user "$PUB" --level owner >/dev/null
  fi
fi

if [ "$READSTORM" = yes ] && [ "$(have_tokens)" -lt "$READSTORM_MAX" ]; then
  # The staff users, their grants and tokens in one SQL transaction against the cluster (the
  # superuser's URL): 10,000 in a few seconds. (The CLI makes one user per three processes,
  # ~12 users/s here: 14 min for 10,000.) Tokens are random, stored as their SHA-256 exactly as
  # `admin token issue` stores them, and written to the tokens file.
  start_n=$(have_tokens)
  t0=$(date +%s)
  echo "readstorm: creating staff users $((start_n + 1))–$READSTORM_MAX in one transaction…"
  mkdir -p "$DATA/readstorm"
  DB_URL=$("$SC" cluster url)
  psql -X -q -v ON_ERROR_STOP=1 "$DB_URL" -v first="$((start_n + 1))" -v last="$READSTORM_MAX" -v event="$RS_EVENT" \
    <<'SQL' >"$DATA/readstorm/psql.log" 2>&1 || echo "readstorm: psql: $(tail -n 3 "$DATA/readstorm/psql.log")" >&2
BEGIN;
CREATE TEMP TABLE new_staff ON COMMIT DROP AS
    SELECT gen_random_uuid() AS id, 'Staff ' || g AS name,
           -- the shape TokenHasher.looksValid wants: sc_ and 43 base64url characters
           'sc_' || left(md5(random()::text || g) || md5(clock_timestamp()::text || g), 43) AS token
    FROM generate_series(:first, :last) g;
INSERT INTO profiles (id, display_name) SELECT id, name FROM new_staff;
INSERT INTO event_access (event_id, user_id, access_level) SELECT :'event', id, 'staff' FROM new_staff;
INSERT INTO api_tokens (token_hash, user_id, label) SELECT sha256(convert_to(token, 'UTF8')), id, 'bench' FROM new_staff;
\copy (SELECT token FROM new_staff ORDER BY name) TO pstdout
COMMIT;
SQL
  grep -E '^sc_' "$DATA/readstorm/psql.log" > "$DATA/readstorm/new.token" || true
  cat "$DATA/readstorm/new.token" >> "$TOKENS" 2>/dev/null || true
  echo "readstorm: $(( $(have_tokens) - start_n )) staff users created in $(( $(date +%s) - t0 )) s; $(have_tokens) in all"
  if [ -d "$DATA/postgres" ] && [ ! -e "$DATA/cluster-location" ]; then
    # Keep them for the next run: a copy of the stopped cluster, swapped in whole.
    "$SC" cluster stop >/dev/null 2>&1
    CACHE_NEW="$CACHE.new.$$"
    mkdir -p -m 700 "$CACHE_ROOT" && mkdir -p "$CACHE_NEW"
    cp -a "$DATA/postgres" "$CACHE_NEW/postgres"
    cp "$TOKENS" "$CACHE_NEW/readstorm.tokens"
    printf 'EVENT=%s\nPUB=%s\nSUB=%s\nPT=%s\nST=%s\nRS_EVENT=%s\n' "$EVENT" "$PUB" "$SUB" "$PT" "$ST" "$RS_EVENT" > "$CACHE_NEW/ids.env"
    chmod -R go-rwx "$CACHE_NEW/readstorm.tokens" "$CACHE_NEW/ids.env"
    rm -rf "$CACHE.old.$$"
    if [ -d "$CACHE" ]; then mv "$CACHE" "$CACHE.old.$$"; fi
    mv "$CACHE_NEW" "$CACHE" && CACHE_NEW=""
    rm -rf "$CACHE.old.$$"
    "$SC" cluster start >/dev/null 2>>"$DATA/admin.log"
    echo "readstorm: cached in $CACHE"
  fi
fi
READSTORM_ARGS=()
if [ "$READSTORM" = yes ]; then READSTORM_ARGS=(--readstorm-tokens "$TOKENS" --readstorm-event "$RS_EVENT"); fi

# PG_STATEMENTS=FILE: load pg_stat_statements (nested statements and planning counted) into this
# run's cluster before the server starts; its table goes to FILE after the bench.
if [ -n "${PG_STATEMENTS:-}" ]; then
  DB_URL=$("$SC" cluster url)
  PG_DIR=$("$SC" cluster status 2>/dev/null | sed -n 's/^running: //p')
  [ -n "$PG_DIR" ] && [ -w "$PG_DIR/postgresql.conf" ] || { echo "PG_STATEMENTS: no running cluster to configure" >&2; exit 1; }
  printf "\nshared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = all\npg_stat_statements.track_planning = on\n" >> "$PG_DIR/postgresql.conf"
  "$SC" cluster stop >/dev/null 2>>"$DATA/admin.log"
  "$SC" cluster start >/dev/null 2>>"$DATA/admin.log"
  psql -X -q -v ON_ERROR_STOP=1 "$DB_URL" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >>"$DATA/pgss.log" 2>&1 \
    || { echo "PG_STATEMENTS: $(tail -n 3 "$DATA/pgss.log")" >&2; exit 1; }
fi
# SERVER_NOFILE: the server's own descriptor limit (soft and hard), e.g. to measure what the size
# of libwebsockets' descriptor table (it has one entry per allowed descriptor) costs a connect.
( if [ -n "${SERVER_NOFILE:-}" ]; then ulimit -n "$SERVER_NOFILE"; fi
  exec "$SC" serve --config "$DATA/bench.yaml" --listen "127.0.0.1:$PORT" ) > "$DATA/serve.log" 2>&1 &
SERVER=$!
ready=no
for _ in $(seq 1 150); do
  if curl -sfk "$SCHEME://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; then ready=yes; break; fi
  kill -0 "$SERVER" 2>/dev/null || break
  sleep 0.2
done
if [ "$ready" != yes ]; then
  echo "the server did not become ready; its log:" >&2
  tail -n 40 "$DATA/serve.log" >&2
  exit 1
fi
SERVER_PIDS="$SERVER"
SUBSCRIBER_PORTS_ARGS=()
if [ "$SERVERS" -gt 1 ]; then
  # The others on the same cluster (started detached above, so it outlives any one of them).
  ports="$PORT"
  for i in $(seq 1 $((SERVERS - 1))); do
    p=$((PORT + i))
    "$SC" serve --config "$DATA/bench.yaml" --listen "127.0.0.1:$p" > "$DATA/serve-$p.log" 2>&1 &
    EXTRA_SERVERS+=($!)
    SERVER_PIDS="$SERVER_PIDS,$!"
    ports="$ports,$p"
  done
  for i in $(seq 1 $((SERVERS - 1))); do
    p=$((PORT + i))
    for _ in $(seq 1 150); do curl -sfk "$SCHEME://127.0.0.1:$p/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
    curl -sfk "$SCHEME://127.0.0.1:$p/readyz" >/dev/null 2>&1 || { echo "the server on :$p did not become ready:" >&2; tail -n 20 "$DATA/serve-$p.log" >&2; exit 1; }
  done
  SUBSCRIBER_PORTS_ARGS=(--subscriber-ports "$ports")
  echo "$SERVERS servers on one database: ports $ports, pids $SERVER_PIDS"
fi
PG_PID=0
CLUSTER_DIR=$("$SC" cluster status 2>/dev/null | sed -n 's/^running: //p')
if [ -n "$CLUSTER_DIR" ] && [ -r "$CLUSTER_DIR/postmaster.pid" ]; then PG_PID=$(head -n 1 "$CLUSTER_DIR/postmaster.pid"); fi

echo "machine: $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB, $(uname -r); ulimit -n $(ulimit -n)"
echo "server pid $SERVER (VmRSS $(awk '/VmRSS/{print $2" "$3}' /proc/$SERVER/status)), PostgreSQL postmaster pid $PG_PID"
echo "bench config: $(grep -v '^#' "$DATA/bench.yaml" | grep -v ops_token | tr '\n' ' ')"
# PERF_RECORD=FILE / PERF_STAT=FILE: a CPU profile of the server process alone while the bench
# runs (perf attached after the server is ready; docs/performance.md, "Where the time goes").
PERF_PIDS=()
if [ -n "${PERF_RECORD:-}" ]; then
  perf record -g -F "${PERF_FREQ:-999}" -p "$SERVER" -o "$PERF_RECORD" >"$DATA/perf-record.log" 2>&1 &
  PERF_PIDS+=($!)
fi
if [ -n "${PERF_STAT:-}" ]; then
  perf stat -p "$SERVER" -o "$PERF_STAT" >"$DATA/perf-stat.log" 2>&1 &
  PERF_PIDS+=($!)
fi
if [ ${#PERF_PIDS[@]} -gt 0 ]; then sleep 1; fi
status=0
"$BENCH" --server "$SCHEME://127.0.0.1:$PORT" --server-pid "$SERVER_PIDS" --postgres-pid "$PG_PID" --event "$EVENT" \
  --subscriber-token "$ST" --publisher-token "$PT" --ops-token "$OPS_TOKEN" "${READSTORM_ARGS[@]}" "${SUBSCRIBER_PORTS_ARGS[@]}" || status=$?
for p in "${PERF_PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
if [ -n "${PG_STATEMENTS:-}" ]; then
  # Per statement: calls, PostgreSQL time (execution and planning) per call and in all, rows,
  # WAL written per call and full-page images.
  psql -X -q "$DB_URL" -P pager=off -P format=aligned >"$PG_STATEMENTS" 2>&1 <<'SQL' || true
SELECT calls,
       round(((total_exec_time + total_plan_time) * 1000 / nullif(calls, 0))::numeric, 1) AS us_per_call,
       round((total_plan_time * 1000 / nullif(calls, 0))::numeric, 1) AS plan_us_per_call,
       round((total_exec_time + total_plan_time)::numeric) AS total_ms,
       rows, toplevel AS top, round(wal_bytes / nullif(calls, 0)) AS wal_bytes_per_call, wal_fpi,
       left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query
FROM pg_stat_statements
ORDER BY total_exec_time + total_plan_time DESC LIMIT 40;
SQL
  echo "PostgreSQL statements: $PG_STATEMENTS"
fi
if ! kill -0 "$SERVER" 2>/dev/null; then
  echo "!! the server exited during the bench; the end of its log ($SERVER_LOG_COPY):"
  tail -n 30 "$DATA/serve.log"
  status=1
elif [ -s "$DATA/serve.log" ]; then
  echo "server log: $(wc -l < "$DATA/serve.log") lines of warnings and errors (kept in $SERVER_LOG_COPY)"
fi
exit $status
