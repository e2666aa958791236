#!/usr/bin/env bash
# Soak test: SOAK_CONNECTIONS (10,000) subscribed WebSockets held for SOAK_MINUTES (30) minutes
# while one publisher sends SOAK_RATE (2) messages a second; prints the server's VmRSS after
# every minute (with what was lost or doubled that minute) and its growth at the end.
#
#   bench/soak.sh                       # 30 minutes, 10,000 connections (release build, as make bench)
#   bench/soak.sh 3                     # 3 minutes
#   SOAK_CONNECTIONS=2000 SOAK_RATE=5 bench/soak.sh 2
#   SOAK_BIN_DIR=.build/debug bench/soak.sh 2    # binaries already built there (no build)
#
# It is the `soak` scenario of staffcast-bench (bench/README.md) run by scripts/bench.sh: a
# release server on a fresh embedded cluster, port PORT (18080), raised `ulimit -n`, the server's
# log kept in ${TMPDIR:-/tmp}/staffcast-bench-serve.log. Never part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
export SOAK_MINUTES="${1:-${SOAK_MINUTES:-30}}"
export SOAK_CONNECTIONS="${SOAK_CONNECTIONS:-10000}"
export SOAK_RATE="${SOAK_RATE:-2}"
export SCENARIOS=soak
case "$SOAK_MINUTES" in '' | *[!0-9]*) echo "minutes must be a whole number, not '$SOAK_MINUTES'" >&2; exit 2 ;; esac
BIN_DIR="${SOAK_BIN_DIR:-}"
if [ -z "$BIN_DIR" ]; then
  # Its own scratch path, as make bench: never races another build.
  swift build -c release --scratch-path .build-bench --product staffcast
  swift build -c release --scratch-path .build-bench --product staffcast-bench
  BIN_DIR="$(swift build -c release --scratch-path .build-bench --show-bin-path)"
fi
echo "soak: $SOAK_CONNECTIONS connections for $SOAK_MINUTES min at $SOAK_RATE msg/s ($BIN_DIR)"
exec scripts/bench.sh "$BIN_DIR"
