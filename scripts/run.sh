#!/usr/bin/env bash
# `make run`: the first time, create a demo event with an organiser and a staff member;
# print ready-to-paste commands; then run the server in the foreground (Ctrl-C stops it).
set -euo pipefail
BIN="$1"
DATA_DIR="${DATA_DIR:-./.staffcast}"
LISTEN="${LISTEN:-0.0.0.0:8080}"
PORT="${LISTEN##*:}"
export STAFFCAST_DATA_DIR="$DATA_DIR"
mkdir -p "$DATA_DIR"
DEMO="$DATA_DIR/demo.env"
if [ ! -f "$DEMO" ]; then
  echo "staffcast: first run: creating a demo event, an organiser and a staff member…"
  "$BIN" admin demo --output "$DEMO"
fi
# shellcheck disable=SC1090
source "$DEMO"
SC="$BIN"
cat <<EOT

  Demo event "$DEMO_EVENT_NAME"  id $EVENT
  Organiser token in $ORGANISER_TOKEN_FILE, staff token in $STAFF_TOKEN_FILE (mode 0600)

  In another terminal, watch as staff:
    $SC watch --server http://127.0.0.1:$PORT --token-file $STAFF_TOKEN_FILE --event $EVENT

  Send as the organiser:
    $SC send --server http://127.0.0.1:$PORT --token-file $ORGANISER_TOKEN_FILE --event $EVENT --priority urgent "Evacuate hall B"
    curl -s -H "Authorization: Bearer \$(cat $ORGANISER_TOKEN_FILE)" -d "Gates open in 15 minutes" \\
         "http://127.0.0.1:$PORT/v1/events/$EVENT/messages?priority=high"

  Who has read it (organiser):
    curl -s -H "Authorization: Bearer \$(cat $ORGANISER_TOKEN_FILE)" http://127.0.0.1:$PORT/v1/messages/MESSAGE_ID/receipts

  Health:  $SC status --server http://127.0.0.1:$PORT

EOT
exec "$BIN" serve --listen "$LISTEN" --data-dir "$DATA_DIR"
