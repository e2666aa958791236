#!/usr/bin/env bash
# `make fuzz` (and the smoke run beside the tests in `make test`): libFuzzer, coverage-guided, with
# AddressSanitizer, on the three parsers that take bytes straight from the network:
#
#   frames  fuzz/FrameDecoderFuzz.swift  ClientFrameDecoder.decode (and WireFields, SendRequest,
#                                        ReplyRequest, TextRules behind it), plus SendRequest on
#                                        the raw bytes
#   http    fuzz/HTTPParserFuzz.swift    HTTPRequestParser.parse as a keep-alive connection uses
#                                        it (parse, drop `consumed`, parse again), with the
#                                        server's limits and tiny ones; HTTPRequestHead's
#                                        bearerToken, keepAlive and isWebSocketUpgrade
#   wsframe fuzz/WebSocketFrameFuzz.swift WebSocketFrameReader (and UTF8Validator): wss client
#                                        bytes read whole, cut in two, and byte by byte
#
#   scripts/fuzz.sh [RUNS]     RUNS inputs per target (default FUZZ_RUNS, else 600,000)
#
# Each target is one executable built by swiftc straight from the StaffcastCore sources it
# needs (no SwiftPM, so it never touches the package build) into .build-fuzz/, and runs on a
# fresh copy of its seed corpus fuzz/corpus/<target>/ (new inputs never land in git) with
# fuzz/<target>.dict. Prints one line per target and exits non-zero on any crash, broken
# invariant (fatalError in the target), leak, out-of-memory (-rss_limit_mb) or hang
# (-timeout, seconds per input); the input that did it is kept in .build-fuzz/artifacts/ and
# printed in hex with the stack; the log stays in .build-fuzz/work/. Reproduce one with
# `.build-fuzz/bin/<target> <artifact>`.
#
# Memory: -rss_limit_mb (FUZZ_RSS_MB, 512) bounds it, and RSS may grow by at most
# FUZZ_RSS_GROWTH_MB (64) between a tenth of the runs and the end (printed as "rss A -> B MB").
#
# Environment: FUZZ_RUNS, FUZZ_TARGETS ("frames http wsframe"), FUZZ_SEED (libFuzzer -seed; random by
# default, printed), FUZZ_RSS_MB, FUZZ_RSS_GROWTH_MB, FUZZ_TIMEOUT (5), FUZZ_BUILD
# (.build-fuzz), SWIFTC, ASAN_OPTIONS.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

RUNS=${1:-${FUZZ_RUNS:-600000}}
TARGETS=${FUZZ_TARGETS:-frames http wsframe}
RSS_MB=${FUZZ_RSS_MB:-512}
GROWTH_MB=${FUZZ_RSS_GROWTH_MB:-64}
TIMEOUT=${FUZZ_TIMEOUT:-5}
BUILD=${FUZZ_BUILD:-$ROOT/.build-fuzz}
SWIFTC=${SWIFTC:-swiftc}
CORE=Sources/StaffcastCore

# The target's entry file, its StaffcastCore sources (what the code under test reaches; a
# missing one is a compile error naming the type), its input size limit.
target_sources() {
  case "$1" in
    frames) echo fuzz/FrameDecoderFuzz.swift \
              $CORE/Protocol/{ClientFrameDecoder,ClientFrameDecoder+Plain,ClientFrame,ClientFrame+Codable,WireFields,WireKey,KnownFields,EditDistance,SendBody,Wire,WireValue,WireNull,WireDefault,KeyedDecodingContainer+RFC3339,JSONValue,RFC3339,SendRequest,TextRules}.swift \
              $CORE/Model/{Limits,MessageType,Priority,StaffMessage,StaffNotification,UUID+WireText,HexDigit}.swift \
              $CORE/Errors/{ErrorCode,StaffcastError}.swift \
              $CORE/Toolbox/{LeadTime,MessageTemplate,Reply,ReplyRequest,SendSchedule,TemplateUse}.swift \
              $CORE/Audience/{Team,TeamName,Poll}.swift ;;
    http)   echo fuzz/HTTPParserFuzz.swift \
              $CORE/HTTP/{HTTPRequestParser,HTTPRequestHead}.swift $CORE/Model/{Limits,HexDigit}.swift ;;
    wsframe) echo fuzz/WebSocketFrameFuzz.swift \
              $CORE/WebSocket/{WebSocketFrameReader,UTF8Validator}.swift ;;
    *) echo "unknown fuzz target '$1' (frames, http, wsframe)" >&2; return 1 ;;
  esac
}
# frames: beyond the 4,096-byte message limit; http: beyond the 8,192-byte head limit;
# wsframe: many frames, and lengths in all three forms.
max_len() { case "$1" in frames) echo 8192 ;; http) echo 12288 ;; wsframe) echo 4096 ;; esac; }

mkdir -p "$BUILD/bin" "$BUILD/logs" "$BUILD/artifacts" "$BUILD/work"

build() {
  local t=$1 bin="$BUILD/bin/$1" srcs
  srcs=$(target_sources "$t")
  # Rebuilt only when a source (or this script) is newer than the binary.
  if [ -x "$bin" ] && [ -z "$(find $srcs "$ROOT/scripts/fuzz.sh" -newer "$bin" 2>/dev/null)" ]; then return 0; fi
  echo "fuzz $t: building $bin" >&2
  # -O keeps Swift's bounds and overflow checks; -assert-config Debug also keeps the checks
  # that -O drops, among them the bounds of UnsafeBufferPointer (the HTTP parser reads through
  # rebased slices, where a read past the slice but inside the buffer is invisible to ASan).
  # ld.gold warns about every ASan helper symbol; those lines are noise.
  if ! "$SWIFTC" -sanitize=fuzzer,address -parse-as-library -O -assert-config Debug -g \
        -module-name StaffcastFuzz \
        $srcs -o "$bin.new.$$" >"$BUILD/logs/$t-build.log" 2>&1; then
    grep -v "Cannot export local symbol" "$BUILD/logs/$t-build.log" >&2
    rm -f "$bin.new.$$"
    echo "fuzz $t: build failed (the compiler's errors are above; a toolchain without clang's libFuzzer runtime fails here too)" >&2
    return 1
  fi
  mv "$bin.new.$$" "$bin"
}

run() {
  # This run's own directory (two runs at once do not mix): the corpus copy, the log, kept
  # only when the run fails.
  local t=$1 work="$BUILD/work/$t.$$" artifacts="$BUILD/artifacts/$t/"
  local log="$work/fuzz.log" corpus="$work/corpus" stamp="$work/started"
  rm -rf "$work" && mkdir -p "$corpus" "$artifacts"
  cp fuzz/corpus/"$t"/* "$corpus"/
  touch "$stamp"
  local seed_arg=() start end status=0
  [ -n "${FUZZ_SEED:-}" ] && seed_arg=(-seed="$FUZZ_SEED")
  start=$(date +%s.%N)
  # SWIFT_BACKTRACE off: the Swift runtime's own crash handler would otherwise take the signal
  # from libFuzzer (and trip ASan in its memory server).
  # ASan's quarantine (256 MB by default) alone makes RSS climb for minutes whatever the code
  # does; a small one keeps RSS a measure of the code's memory.
  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=16} \
    "$BUILD/bin/$t" -runs="$RUNS" -max_len="$(max_len "$t")" -rss_limit_mb="$RSS_MB" \
      -malloc_limit_mb="$RSS_MB" -timeout="$TIMEOUT" -detect_leaks=1 -print_final_stats=1 \
      -dict="fuzz/$t.dict" -artifact_prefix="$artifacts" "${seed_arg[@]}" "$corpus" >"$log" 2>&1 || status=$?
  end=$(date +%s.%N)
  local runs seed cov rss0 rss1 secs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  seed=$(sed -n 's/^INFO: Seed: *//p' "$log" | head -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  # Memory stays flat: RSS once a tenth of the runs are done (allocator and corpus warmed up)
  # against the peak, which may exceed it by at most FUZZ_RSS_GROWTH_MB.
  rss0=$(awk -v n="$((RUNS / 10))" '/^#[0-9]+\t/ && substr($1, 2) + 0 >= n { for (i = 1; i < NF; i++) if ($i == "rss:") { print $(i + 1) + 0; exit } }' "$log")
  rss1=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  if [ "$status" -eq 0 ] && [ -n "$rss0" ] && [ -n "$rss1" ] && [ $((rss1 - rss0)) -gt "$GROWTH_MB" ]; then
    echo "fuzz $t: ${runs} runs, 0 crashes, but RSS grew from ${rss0} MB (at $((RUNS / 10)) runs) to ${rss1} MB, more than ${GROWTH_MB} MB; log $log" >&2
    return 1
  fi
  if [ "$status" -eq 0 ] && [ "${runs:-0}" -ge "$RUNS" ]; then
    echo "fuzz $t: ${runs} runs, 0 crashes (${secs} s, seed ${seed}, ${cov:-?} edges, rss ${rss0:-?} -> ${rss1:-?} MB)"
    cp "$log" "$BUILD/logs/$t.log" # the last good run's log, for a look at coverage and RSS
    rm -rf "$work"
    return 0
  fi
  local what
  what=$(grep -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): [^0-9(]*[a-z]|Fatal error: .*' "$log" || true)
  echo "fuzz $t: ${runs:-?} runs, 1 crash (${what:-exit $status}; ${secs} s, seed ${seed}), log $log" >&2
  local input
  find "$artifacts" -type f -newer "$stamp" | while read -r input; do
    echo "  input $input ($(wc -c <"$input") bytes, hex): $(od -An -tx1 -v "$input" | tr -d ' \n' | cut -c1-512)" >&2
  done
  # The Swift runtime's message, then the sanitizer's symbolicated report.
  grep -m1 'Fatal error' "$log" >&2 || true
  sed -n '/ERROR: /,/^SUMMARY/p' "$log" | grep -v '^#[0-9]' | head -50 >&2
  return 1
}

failed=0
for t in $TARGETS; do
  build "$t" || { failed=1; continue; }
  run "$t" || failed=1
done
exit $failed
