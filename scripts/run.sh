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
SCHEME=http
SERVE_TLS=()
CA_ARG=""
if [ -n "${TLS:-}" ]; then
  # A test CA and a certificate for localhost, 127.0.0.1 and this host's name, made once.
  TLS_DIR="$DATA_DIR/tls"
  if [ ! -f "$TLS_DIR/server.pem" ]; then
    echo "staffcast: TLS=1: creating a self-signed test CA and a server certificate in $TLS_DIR…"
    "$(dirname "$0")/tls-selfsigned.sh" "$TLS_DIR"
  fi
  SCHEME=https
  SERVE_TLS=(--tls-cert "$TLS_DIR/server.pem" --tls-key "$TLS_DIR/server.key")
  CA_ARG=" --ca-file $TLS_DIR/ca.pem"
fi
if [ ! -f "$DEMO" ]; then
  echo "staffcast: first run: creating a demo event, an organiser and a staff member…"
  # Admin commands never create the cluster by themselves: this is the first run, so say so.
  "$BIN" admin demo --create --output "$DEMO"
fi
# shellcheck disable=SC1090
source "$DEMO"
SC="$BIN"
# A fresh invite each run (a day, 20 uses): opened on a phone it ends in the staff app, signed in.
# The QR code goes to stderr when that is a terminal. Phones need this machine's address, and
# HTTPS for push and the service worker anywhere but localhost (docs/operations.md).
# A phone cannot open 127.0.0.1 (that is the phone itself): its links use this machine's first
# network address when it listens on all of them.
PHONE_HOST=127.0.0.1
if [ "${LISTEN%:*}" = "0.0.0.0" ]; then
  PHONE_HOST=$(hostname -I 2>/dev/null | awk '{print $1}')
  PHONE_HOST=${PHONE_HOST:-127.0.0.1}
fi
INVITE=$("$BIN" admin invite create --data-dir "$DATA_DIR" --event "$EVENT" --uses 20 --expires 1d \
  --server "$SCHEME://$PHONE_HOST:$PORT" 2>/dev/null || echo "(no invite: $BIN admin invite create --event $EVENT)")
cat <<EOT

  Demo event "$DEMO_EVENT_NAME"  id $EVENT
  Organiser token in $ORGANISER_TOKEN_FILE, staff token in $STAFF_TOKEN_FILE (mode 0600)

  In another terminal, watch as staff:
    $SC watch --server $SCHEME://127.0.0.1:$PORT$CA_ARG --token-file $STAFF_TOKEN_FILE --event $EVENT

  Send as the organiser:
    $SC send --server $SCHEME://127.0.0.1:$PORT$CA_ARG --token-file $ORGANISER_TOKEN_FILE --event $EVENT --priority urgent "Evacuate hall B"
    curl -s${CA_ARG:+ --cacert $TLS_DIR/ca.pem} -H "Authorization: Bearer \$(cat $ORGANISER_TOKEN_FILE)" -d "Gates open in 15 minutes" \\
         "$SCHEME://127.0.0.1:$PORT/v1/events/$EVENT/messages?priority=high"

  Who has read it (organiser):
    curl -s${CA_ARG:+ --cacert $TLS_DIR/ca.pem} -H "Authorization: Bearer \$(cat $ORGANISER_TOKEN_FILE)" $SCHEME://127.0.0.1:$PORT/v1/messages/MESSAGE_ID/receipts

  Staff app (phones on this network):   $SCHEME://$PHONE_HOST:$PORT/app
    invite link that opens it signed in (20 uses, a day): $INVITE
  Organiser console:    $SCHEME://127.0.0.1:$PORT/console   (sign in with the token in $ORGANISER_TOKEN_FILE)

  Health:  $SC status --server $SCHEME://127.0.0.1:$PORT$CA_ARG

EOT
exec "$BIN" serve --listen "$LISTEN" --data-dir "$DATA_DIR" ${SERVE_TLS[@]+"${SERVE_TLS[@]}"}
