#!/usr/bin/env bash
# Installs what staffcast needs and is missing, from Debian's packages. Idempotent: when
# everything is there it only checks. Needs root (or sudo) only when something is missing.
set -euo pipefail

need=()
pkg-config --exists libwebsockets 2>/dev/null || need+=(libwebsockets-dev)
# The service loops' event loop (`event_loop: ev`): libev and libwebsockets' plugin for it.
[ -f /usr/include/ev.h ] || need+=(libev-dev)
ls /usr/lib/*/libwebsockets-evlib_ev.so >/dev/null 2>&1 || need+=(libwebsockets-evlib-ev)
pkg-config --exists libpq 2>/dev/null || need+=(libpq-dev)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
[ -f /usr/include/ncursesw/curses.h ] || need+=(libncurses-dev)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v curl >/dev/null 2>&1 || need+=(curl)
pkg-config --exists openssl 2>/dev/null || need+=(libssl-dev)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v runuser >/dev/null 2>&1 || need+=(util-linux)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -f /usr/include/qrencode.h ] || need+=(libqrencode-dev)
pkg-config --exists libcurl 2>/dev/null || need+=(libcurl4-openssl-dev)   # Web Push, webhooks and SMTP
# The web console's test drives a real browser: headless Chromium through Selenium.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
command -v zbarimg >/dev/null 2>&1 || need+=(zbar-tools)   # the tests read the QR codes back
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v ss >/dev/null 2>&1 || need+=(iproute2)   # a TLS test tells socket pairs apart with ss
# `make test` checks the systemd unit of `make install` with systemd-analyze (no running systemd needed).
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
python3 -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("pip") is None)' >/dev/null 2>&1 || need+=(python3-pip)

if [ ${#need[@]} -gt 0 ]; then
  echo "staffcast: installing ${need[*]}"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "staffcast: please install as root: apt-get install -y ${need[*]}" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The python modules the tests use (PyPI), as module:package:what needs it. Looked up in one
# interpreter with find_spec, which finds a module without importing it: importing each one
# (schemathesis alone takes seconds) made this check a good part of a `make test` that had
# nothing to install. Debian's python3 is "externally managed", so pip needs
# --break-system-packages there (nothing else uses these).
python_modules=(
  # The transport tests also check that a standard WebSocket client reads the 401 before the
  # upgrade as a 401.
  "websockets:websockets:a transport test"
  # Selenium drives chromium for the console's and the staff app's browser tests; axe-core
  # (axe-selenium-python carries axe.min.js) checks them for accessibility.
  "selenium:selenium:the browser tests"
  "axe_selenium_python:axe-selenium-python:the browser tests"
  # The delivery tests' real counterparts (scripts/test-counterparts.py): http-ece decrypts Web
  # Push bodies (RFC 8291), py-vapid and cryptography check VAPID (RFC 8292), aiosmtpd is the
  # SMTP server.
  "http_ece:http-ece:the delivery tests"
  "py_vapid:py-vapid:the delivery tests"
  "cryptography:cryptography:the delivery tests"
  "aiosmtpd:aiosmtpd:the delivery tests"
  # schemathesis checks a live server against docs/openapi.yaml (OpenAPIConformanceTests).
  "schemathesis:schemathesis:the OpenAPI test"
)
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import importlib.util, sys
for entry in sys.argv[1:]:
    if importlib.util.find_spec(entry.split(":")[0]) is None: print(entry)' "${python_modules[@]}" |
  while IFS=: read -r module package purpose; do
    echo "staffcast: installing python $package"
    python3 -m pip install -q "$package" >/dev/null 2>&1 \
      || python3 -m pip install -q --break-system-packages "$package" >/dev/null 2>&1 \
      || { echo "staffcast: could not install python $package (pip install $package); $purpose needs it" >&2; exit 1; }
  done
fi

# Debian starts a system-wide cluster when it installs postgresql; staffcast runs its own.
if ! command -v swift >/dev/null 2>&1; then
  echo "staffcast: the Swift 6 toolchain is required (https://swift.org/install); 'swift' is not on PATH" >&2
  exit 1
fi
