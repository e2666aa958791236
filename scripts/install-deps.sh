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
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)

if [ ${#need[@]} -gt 0 ]; then
  echo "staffcast: installing ${need[*]}"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "staffcast: please install as root: apt-get install -y ${need[*]}" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The transport tests also check that a standard WebSocket client (python's `websockets`)
# reads the 401 before the upgrade as a 401.
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import websockets" >/dev/null 2>&1; then
  python3 -m pip install -q websockets >/dev/null 2>&1 \
    || python3 -m pip install -q --break-system-packages websockets >/dev/null 2>&1 \
    || { echo "staffcast: could not install python websockets (pip install websockets); a transport test needs it" >&2; exit 1; }
fi

# Selenium (PyPI) drives chromium for the console's browser test; Debian's python3 is
# "externally managed", so pip needs --break-system-packages there (nothing else uses it).
if ! python3 -c "import selenium" >/dev/null 2>&1; then
  echo "staffcast: installing python selenium"
  python3 -m pip install -q selenium >/dev/null 2>&1 \
    || python3 -m pip install -q --break-system-packages selenium >/dev/null 2>&1 \
    || { echo "staffcast: could not install python selenium (pip install selenium); the console's browser test needs it" >&2; exit 1; }
fi

# axe-core (PyPI axe-selenium-python, which carries axe.min.js) checks the console and the staff
# app for accessibility in the same browser tests.
if ! python3 -c "import axe_selenium_python" >/dev/null 2>&1; then
  echo "staffcast: installing python axe-selenium-python"
  python3 -m pip install -q axe-selenium-python >/dev/null 2>&1 \
    || python3 -m pip install -q --break-system-packages axe-selenium-python >/dev/null 2>&1 \
    || { echo "staffcast: could not install python axe-selenium-python (pip install axe-selenium-python); the browser tests need it" >&2; exit 1; }
fi

# The delivery tests' real counterparts (scripts/test-counterparts.py): PyPI http-ece decrypts
# Web Push bodies (RFC 8291), py-vapid and cryptography check VAPID (RFC 8292), aiosmtpd is the
# SMTP server.
for module in http_ece:http-ece py_vapid:py-vapid cryptography:cryptography aiosmtpd:aiosmtpd; do
  if ! python3 -c "import ${module%%:*}" >/dev/null 2>&1; then
    echo "staffcast: installing python ${module#*:}"
    python3 -m pip install -q "${module#*:}" >/dev/null 2>&1 \
      || python3 -m pip install -q --break-system-packages "${module#*:}" >/dev/null 2>&1 \
      || { echo "staffcast: could not install python ${module#*:} (pip install ${module#*:}); the delivery tests need it" >&2; exit 1; }
  fi
done

# schemathesis (PyPI) checks a live server against docs/openapi.yaml (OpenAPIConformanceTests).
if ! python3 -c "import schemathesis" >/dev/null 2>&1; then
  echo "staffcast: installing python schemathesis"
  python3 -m pip install -q schemathesis >/dev/null 2>&1 \
    || python3 -m pip install -q --break-system-packages schemathesis >/dev/null 2>&1 \
    || { echo "staffcast: could not install python schemathesis (pip install schemathesis); the OpenAPI test needs it" >&2; exit 1; }
fi

# Debian starts a system-wide cluster when it installs postgresql; staffcast runs its own.
if ! command -v swift >/dev/null 2>&1; then
  echo "staffcast: the Swift 6 toolchain is required (https://swift.org/install); 'swift' is not on PATH" >&2
  exit 1
fi
