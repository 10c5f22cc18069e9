# pmdt: set-up, tests, benchmarks. Run as root (DPDK needs hugepages and TAP devices).
SHELL := /bin/bash
# rustup installs into ~/.cargo/bin, which may not be on PATH yet on a fresh machine.
CARGO ?= $(shell command -v cargo 2>/dev/null || echo $$HOME/.cargo/bin/cargo)

.PHONY: setup build test lint bench fmt clean demo msrv install-check

setup:
	@scripts/setup.sh

build: setup
	$(CARGO) build --workspace --all-targets --release

# The whole test suite (what CI runs): lint, then every test in the workspace.
# Each DPDK integration test file is its own process (one EAL per process).
test: setup lint
	$(CARGO) test --workspace --all-targets
	$(CARGO) test --workspace --doc
	$(CARGO) build -q -p pmdt --no-default-features   # the transport without DPDK

# The minimum supported Rust version (`rust-version` in Cargo.toml), checked with
# that very toolchain (rustup installs it, minimal profile) against the locked
# dependencies, for every target: libraries, binaries, tests, benches and
# examples (their dev-dependencies included). CI runs it after `make test`.
MSRV := $(shell sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
RUSTUP ?= $(shell command -v rustup 2>/dev/null || echo $$HOME/.cargo/bin/rustup)
msrv: setup
	$(RUSTUP) toolchain install $(MSRV) --profile minimal --no-self-update
	$(RUSTUP) run $(MSRV) cargo check --workspace --all-targets --locked

# The README's `cargo install --path bins/pmdt-tools --locked`, into a scratch
# root; a debug build reusing this tree's target directory, so it costs little
# after `make test` (the release build differs only in the profile). CI runs it.
install-check: setup
	root=$$(mktemp -d) && \
	CARGO_TARGET_DIR=$${CARGO_TARGET_DIR:-$(CURDIR)/target} \
	  $(CARGO) install -q --path bins/pmdt-tools --locked --debug --root $$root && \
	for b in pmdt-send pmdt-recv pmdt-wanem; do $$root/bin/$$b --version || exit 1; done && \
	rm -rf $$root

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --workspace --exclude dpdk-sys -q

# The main job: a pmdt-recv and a pmdt-send on this host, two DPDK processes over
# memif, I/O lcores pinned to different cores; prints the transfer summary.
demo: setup
	CARGO=$(CARGO) scripts/demo.sh

# Performance, measured in one place: pmdt-bench runs the real tools and their peers
# (testpmd, iperf3, sockperf, QUIC) as pinned processes and writes JSON, CSV, a
# Markdown table and a PNG per experiment into docs/bench/latest (see README).
#   make bench BENCH=peers BENCH_ARGS="--quick --out /tmp/bench"
# Criterion micro-benchmarks: cargo bench.
BENCH ?= all
BENCH_ARGS ?=
bench: setup
	$(CARGO) build --release -q -p pmdt-tools -p pmdt-load-sweep -p pmdt-bench
	$(CARGO) run --release -q -p pmdt-bench --bin pmdt-bench -- $(BENCH) $(BENCH_ARGS)
	@# A full run into the default directory refreshes the README's Performance section.
	@case "$(BENCH) $(BENCH_ARGS)" in all*--out*|all*--quick*) ;; all*) \
		$(CARGO) run --release -q -p pmdt-bench --bin pmdt-bench -- readme ;; esac

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
