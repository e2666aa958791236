#!/usr/bin/env bash
# `make install`: the release binary, its systemd unit, a configuration and the docs.
#   scripts/install.sh BIN            (PREFIX=/usr/local, DESTDIR= for packaging into a folder)
# Never overwrites an existing /etc/staffcast/staffcast.yaml. Creates the `staffcast` system
# user only when installing into / as root. Idempotent.
set -euo pipefail
BIN="$1"
PREFIX="${PREFIX:-/usr/local}"
DESTDIR="${DESTDIR:-}"
here="$(cd "$(dirname "$0")/.." && pwd)"

[ -x "$BIN" ] || { echo "staffcast: install: no binary at $BIN (run make build-release)" >&2; exit 1; }
install -D -m 0755 "$BIN" "$DESTDIR$PREFIX/bin/staffcast"

# The unit names the binary where it was installed.
install -d -m 0755 "$DESTDIR/etc/systemd/system"
sed "s#/usr/local/bin/staffcast#$PREFIX/bin/staffcast#; s#/usr/local/share/doc#$PREFIX/share/doc#" \
  "$here/packaging/staffcast.service" > "$DESTDIR/etc/systemd/system/staffcast.service"
chmod 0644 "$DESTDIR/etc/systemd/system/staffcast.service"

conf="$DESTDIR/etc/staffcast/staffcast.yaml"
if [ ! -f "$conf" ]; then
  install -d -m 0755 "$DESTDIR/etc/staffcast"
  sed 's#^data_dir: .*#data_dir: "/var/lib/staffcast"#' "$here/config/staffcast.example.yaml" > "$conf"
  chmod 0640 "$conf"
  echo "staffcast: wrote $conf (edit it: database_url, tls_cert/tls_key, ops_token)"
else
  echo "staffcast: kept $conf"
fi

install -d -m 0755 "$DESTDIR$PREFIX/share/doc/staffcast"
install -m 0644 "$here/README.md" "$here"/docs/*.md "$here/docs/openapi.yaml" "$DESTDIR$PREFIX/share/doc/staffcast/"

if [ -z "$DESTDIR" ] && [ "$(id -u)" -eq 0 ]; then
  if ! id staffcast >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/staffcast --no-create-home --shell /usr/sbin/nologin staffcast
    echo "staffcast: created the system user staffcast"
  fi
  chgrp staffcast "$conf" 2>/dev/null || true
fi

cat <<EOT
staffcast: installed $PREFIX/bin/staffcast and the unit staffcast.service.
  systemctl daemon-reload && systemctl enable --now staffcast
  runuser -u staffcast -- staffcast admin event create --name "My event" --config /etc/staffcast/staffcast.yaml
EOT
