#!/usr/bin/env bash
# The README docs test: runs every shell example of README.md as written, in order, against a
# server it starts the way the README says, and fails on the first command that fails.
#
#   scripts/readme-test.sh [BIN_DIR]     (BIN_DIR holds the staffcast binary; default: the
#                                         debug build, `swift build --show-bin-path`)
#
# The rule (also in README.md, "Using it"):
# - Every block fenced ```sh runs, in README order, in one bash shell (so EVENT=… set in one
#   block is there in the next), in an empty folder with its own HOME, the binary on PATH and
#   STAFFCAST_LISTEN / STAFFCAST_SERVER pointing at a free loopback port. A command that exits
#   non-zero fails the test with its README line.
# - A block right after the line <!-- docs-test: skip … --> is shown, not run (it needs what a
#   test cannot have: a certificate, another machine, or it is `make` itself).
# - A line whose comment says "until Ctrl-C" runs in the background. `staffcast serve` is
#   waited for (/readyz) and runs until the end; any other such command must have printed
#   something and still be running (or have exited 0) when its block ends, and is then
#   stopped as Ctrl-C would (SIGTERM: the same clean stop).
# Prints "README docs test: passed (N commands)" or "README docs test: FAILED at README.md:LINE …".
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
README=${README:-$ROOT/README.md}
BIN_DIR=${1:-$(cd "$ROOT" && swift build --show-bin-path)}
[[ -x "$BIN_DIR/staffcast" ]] || { echo "README docs test: FAILED: no staffcast binary in $BIN_DIR (build first)"; exit 1; }

WORK=$(mktemp -d /tmp/staffcast-readme.XXXXXX)
chmod 755 "$WORK"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SCRIPT="$WORK/readme-examples.sh"

# README.md → one bash script: a `run` or `background` call per command (continuation lines
# joined), an `end_block` after each block.
python3 - "$README" > "$SCRIPT" <<'PY' || { echo "README docs test: FAILED: could not read the examples of $README"; exit 1; }
import shlex, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
out, skip, i, count = [], False, 0, 0
while i < len(lines):
    line = lines[i]
    if line.strip().startswith("<!-- docs-test: skip"):
        skip = True
    elif line.startswith("```"):
        lang = line[3:].strip()
        body, start = [], i + 2
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i]); i += 1
        if lang == "sh" and not skip:
            n = 0
            while n < len(body):
                number, command = start + n, body[n]
                while command.endswith("\\") and n + 1 < len(body):
                    n += 1
                    command = command + "\n" + body[n]  # bash joins the backslash-newline itself
                n += 1
                if not command.strip() or command.lstrip().startswith("#"):
                    continue
                kind = "background" if "until Ctrl-C" in command.split(" #", 1)[-1] and " #" in command else "run"
                out.append(f"{kind} {number} {shlex.quote(command)}")
                count += 1
            out.append("end_block")
        skip = False
    elif line.strip():
        skip = skip and line.strip().startswith("<!--")
    i += 1
if count == 0:
    sys.exit("no ```sh examples found")
print("\n".join(out))
PY

cat > "$WORK/runtime.sh" <<'SH'
# Runtime of the generated script: one shell, the README's commands evaluated as typed.
SERVER_PID=""
BLOCK_PIDS=()
BLOCK_LINES=()
COMMANDS=0

fail() {
    echo "README docs test: FAILED at README.md:$1: $2"
    exit 1
}

run() {
    local line=$1 command=$2
    COMMANDS=$((COMMANDS + 1))
    echo "\$ $command   # README.md:$line"
    eval "$command"
    local status=$?
    ((status == 0)) || fail "$line" "exit status $status from: $command"
}

background() {
    local line=$1 command=$2 log="$WORK/background-$1.log"
    COMMANDS=$((COMMANDS + 1))
    echo "\$ $command   # README.md:$line (in the background)"
    eval "exec $command" > "$log" 2>&1 &
    local pid=$!
    if [[ "$command" == staffcast\ serve* ]]; then
        SERVER_PID=$pid
        local deadline=$((SECONDS + 180))
        until curl -fsS -o /dev/null "$STAFFCAST_SERVER/readyz" 2>/dev/null; do
            kill -0 "$pid" 2>/dev/null || { tail -n 20 "$log"; fail "$line" "the server exited before it was ready: $command"; }
            ((SECONDS < deadline)) || { tail -n 20 "$log"; fail "$line" "the server was not ready within 180 s: $command"; }
            sleep 0.2
        done
        return
    fi
    local deadline=$((SECONDS + 30))
    until [[ -s "$log" ]] || ! kill -0 "$pid" 2>/dev/null; do
        ((SECONDS < deadline)) || fail "$line" "printed nothing within 30 s: $command"
        sleep 0.1
    done
    BLOCK_PIDS+=("$pid")
    BLOCK_LINES+=("$line")
}

# Background commands of the block: still running (then stopped like Ctrl-C) or exited 0.
end_block() {
    local k pid line status pids=("${BLOCK_PIDS[@]}") lines=("${BLOCK_LINES[@]}")
    BLOCK_PIDS=()
    BLOCK_LINES=()
    for k in "${!pids[@]}"; do
        pid=${pids[$k]} line=${lines[$k]}
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid"
            local deadline=$((SECONDS + 15))
            while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
        else
            wait "$pid"
            status=$?
            if ((status != 0)); then
                echo "--- its output:"; tail -n 20 "$WORK/background-$line.log"
                fail "$line" "exited with status $status before its block ended (it should run until Ctrl-C)"
            fi
        fi
        echo "--- README.md:$line printed:"; head -n 5 "$WORK/background-$line.log"
    done
}

stop_server() {
    [[ -n "$SERVER_PID" ]] || return 0
    kill -TERM "$SERVER_PID" 2>/dev/null
    local deadline=$((SECONDS + 60))
    while kill -0 "$SERVER_PID" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -KILL "$SERVER_PID" 2>/dev/null
    SERVER_PID=""
}
SH

cd "$WORK" || exit 1
mkdir -p home
env -i PATH="$BIN_DIR:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME="$WORK/home" \
    LANG=C.UTF-8 TERM=dumb WORK="$WORK" STAFFCAST_LISTEN="127.0.0.1:$PORT" STAFFCAST_SERVER="http://127.0.0.1:$PORT" \
    STAFFCAST_SQL_DIR="$ROOT/sql" \
    bash -c 'source "$WORK/runtime.sh"
             trap "end_block; stop_server" EXIT
             source "$WORK/readme-examples.sh"
             end_block
             echo "README docs test: passed ($COMMANDS commands of README.md ran as written)"' </dev/null
status=$?
# The embedded cluster of the server the README started: stopped with it; make sure, then clean up.
"$BIN_DIR/staffcast" cluster stop --data-dir "$WORK/.staffcast" >/dev/null 2>&1 || true
if ((status == 0)); then rm -rf "$WORK"; else echo "README docs test: its folder is kept: $WORK"; fi
exit $status
