# staffcast — two commands do all set-up on a fresh Debian machine (as root):
#   make run    install what is missing, build, start the server on its own PostgreSQL cluster
#               (make run TLS=1: the same on https:// and wss://, with a self-signed test CA)
#   make test   the same set-up, then every test (unit + integration against real PostgreSQL)
SHELL := /bin/bash
DATA_DIR ?= ./.staffcast
LISTEN   ?= 0.0.0.0:8080
# TLS=1: make run creates a test CA and a certificate for this machine under $(DATA_DIR)/tls
# (once) and serves https:// and wss:// with them.
TLS      ?=
TEST_DATA_DIR := $(CURDIR)/.build/test-cluster
# Fuzz inputs per target (three targets): make fuzz, and the smoke run in make test.
FUZZ_RUNS ?= 600000
FUZZ_SMOKE_RUNS ?= 20000

.PHONY: run test deps build build-release bench bench-peers bench-three fuzz clean test-cluster-stop help install

help:
	@echo "make run    - install dependencies, build (release), start staffcast with a demo event"
	@echo "              (make run TLS=1: on https:// and wss://, with a self-signed test CA)"
	@echo "make test   - install dependencies, build, run every test"
	@echo "make bench  - fan-out benchmark, every scenario of issue 7 (see bench/README.md), then the"
	@echo "              side-by-side table with nchan and NATS when installed (bench/peers.sh --install)"
	@echo "make bench-peers - only the side-by-side table; make bench-three - three servers on one database"
	@echo "make install - the release binary, a hardened systemd unit and /etc/staffcast/staffcast.yaml (PREFIX, DESTDIR)"
	@echo "make fuzz   - libFuzzer on the frame decoder, HTTP framing and wss framing, FUZZ_RUNS inputs each (README: Fuzzing)"

deps:
	@scripts/install-deps.sh

build: deps
	swift build --build-tests

build-release: deps
	swift build -c release --product staffcast

run: build-release
	@DATA_DIR="$(DATA_DIR)" LISTEN="$(LISTEN)" TLS="$(TLS)" scripts/run.sh "$$(swift build -c release --show-bin-path)/staffcast"

# Every test, and beside them a smoke run of the fuzz targets (FUZZ_SMOKE_RUNS inputs each);
# either failing fails `make test`. The smoke run (three executables built by swiftc, not
# SwiftPM, then run: about a minute of one core) goes on in the background while the tests run,
# which spend most of their time waiting on servers and PostgreSQL: it used to come first, a
# minute of the wall time of every clean `make test`. Its lines (.build/fuzz.log meanwhile) come
# after the tests', then each phase's time. The unit tests (no database, no server) run first in
# one process: a process each would cost more than they take. Then the others run in
# TEST_WORKERS processes at once, a process per test (most of a test's time is spent waiting on
# servers and PostgreSQL, so more workers than cores); every test has its own database, ports
# and folders, and they share the test cluster, whose set-up is locked across processes. Each
# test's time goes to .build/test-results.xml (xUnit). TEST_PARALLEL= runs every test one after
# another in one process.
UNIT_TESTS := StaffcastCoreTests|StaffcastClientTests
TEST_WORKERS ?= 6
TEST_PARALLEL ?= --parallel --num-workers $(TEST_WORKERS) --xunit-output .build/test-results.xml
test: build
	@set -o pipefail; status=0; skip=(); : >.build/test.log; \
	{ scripts/fuzz.sh $(FUZZ_SMOKE_RUNS); fuzzed=$$?; echo "fuzz smoke run: $$SECONDS s"; exit $$fuzzed; } \
	  >.build/fuzz.log 2>&1 & fuzz=$$!; \
	if [ -n "$(strip $(TEST_PARALLEL))" ]; then \
	  swift test --skip-build --filter '$(UNIT_TESTS)' 2>&1 | tee -a .build/test.log || status=1; \
	  skip=(--skip '$(UNIT_TESTS)'); \
	fi; unit=$$SECONDS; \
	STAFFCAST_TEST_DATA_DIR="$(TEST_DATA_DIR)" swift test --skip-build $(TEST_PARALLEL) "$${skip[@]}" 2>&1 | tee -a .build/test.log || status=$$?; \
	tests=$$SECONDS; \
	wait $$fuzz || status=1; \
	tee -a .build/test.log <.build/fuzz.log; \
	$(MAKE) --no-print-directory test-cluster-stop; \
	echo "make test: unit tests $$unit s, the others $$((tests - unit)) s, the fuzz smoke run beside them" \
	  "(its time above), $$SECONDS s in all after the build" | tee -a .build/test.log; \
	exit $$status

test-cluster-stop:
	@"$$(swift build --show-bin-path)/staffcast" cluster stop --data-dir "$(TEST_DATA_DIR)" >/dev/null 2>&1 || true

# `make install` (as root): binary to $(PREFIX)/bin, packaging/staffcast.service to
# /etc/systemd/system, a configuration to /etc/staffcast (kept if there), the docs; DESTDIR=
# installs into a folder instead (packaging).
PREFIX ?= /usr/local
install: build-release
	@PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh "$$(swift build -c release --show-bin-path)/staffcast"

# The bench builds in its own scratch path (.build-bench) so it never races another build.
BENCH_BUILD := $(CURDIR)/.build-bench
bench: deps
	swift build -c release --scratch-path "$(BENCH_BUILD)" --product staffcast
	swift build -c release --scratch-path "$(BENCH_BUILD)" --product staffcast-bench
	@TLS="$(TLS)" scripts/bench.sh "$$(swift build -c release --scratch-path "$(BENCH_BUILD)" --show-bin-path)"
	@# Issue 21: the same scenarios against nchan and NATS, side by side (bench/README.md: Peers).
	@if bench/peers.sh --check; then \
	  bench/peers.sh "$$(swift build -c release --scratch-path "$(BENCH_BUILD)" --show-bin-path)"; \
	else \
	  echo ""; \
	  echo "The side-by-side table with nchan and NATS needs them installed (bench only, never make test):"; \
	  echo "  sudo bench/peers.sh --install     (apt: nginx libnginx-mod-nchan nats-server), then make bench again"; \
	fi

# Only the side-by-side table (staffcast, NATS, nchan; bench/peers.sh), and three staffcast
# servers on one database (bench/three-servers.sh; docs/scaling.md).
bench-peers: deps
	swift build -c release --scratch-path "$(BENCH_BUILD)" --product staffcast
	swift build -c release --scratch-path "$(BENCH_BUILD)" --product staffcast-bench
	@bench/peers.sh "$$(swift build -c release --scratch-path "$(BENCH_BUILD)" --show-bin-path)"

bench-three: deps
	swift build -c release --scratch-path "$(BENCH_BUILD)" --product staffcast
	swift build -c release --scratch-path "$(BENCH_BUILD)" --product staffcast-bench
	@bench/three-servers.sh "$$(swift build -c release --scratch-path "$(BENCH_BUILD)" --show-bin-path)"

# libFuzzer, coverage-guided (scripts/fuzz.sh): three targets, FUZZ_RUNS inputs each, built with
# swiftc alone into .build-fuzz (no SwiftPM, so it never races another build). Needs only the
# Swift toolchain, not deps.
fuzz:
	@scripts/fuzz.sh $(FUZZ_RUNS)

clean:
	swift package clean
