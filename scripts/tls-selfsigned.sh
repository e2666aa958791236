#!/usr/bin/env bash
# Makes a test CA and a server certificate signed by it, for trying staffcast on TLS
# (`make run TLS=1`), with the openssl command:
#   DIR/ca.pem        the CA certificate: give it to clients (--ca-file, curl --cacert)
#   DIR/server.pem    the server certificate, for localhost, 127.0.0.1 and this host's name (tls_cert)
#   DIR/server.key    its private key, mode 0600 (tls_key)
# For trying only: the CA's key stays in DIR; use a real CA (e.g. your organisation's, or
# Let's Encrypt) for an event.
set -euo pipefail
DIR="${1:?usage: tls-selfsigned.sh DIR}"
mkdir -p "$DIR"
umask 077
HOST="$(hostname 2>/dev/null || echo localhost)"
EC=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${EC[@]}" -keyout "$DIR/ca.key" -out "$DIR/ca.pem" -days 30 \
  -subj "/CN=staffcast test CA ($HOST)" 2>/dev/null
openssl req "${EC[@]}" -keyout "$DIR/server.key" -out "$DIR/server.csr" -subj "/CN=$HOST" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1,DNS:%s\n' "$HOST" > "$DIR/server.ext"
openssl x509 -req -in "$DIR/server.csr" -CA "$DIR/ca.pem" -CAkey "$DIR/ca.key" -CAcreateserial \
  -out "$DIR/server.pem" -days 30 -extfile "$DIR/server.ext" 2>/dev/null
rm -f "$DIR/server.csr" "$DIR/server.ext"
chmod 644 "$DIR/ca.pem" "$DIR/server.pem"
echo "staffcast: test CA $DIR/ca.pem, certificate $DIR/server.pem, key $DIR/server.key (valid 30 days)"
