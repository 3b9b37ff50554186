# wsfs: `make run` shows the agent demo, `make test` runs everything CI checks.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
CARGO ?= cargo
GO ?= go
PYTHON ?= python3
LIB_DIR := $(CURDIR)/target/release

.PHONY: all build run test test-rust test-c test-header test-python test-go test-mcp bench bench-short lint clean

all: build

## build: the Rust library (static and shared) and the generated C header
build:
	$(CARGO) build --release --locked

## run: build, then run the scripted agent demo in a temporary workspace
run: build
	cd go && $(GO) run ./cmd/wsfs demo

## test: everything CI checks
test: lint build test-header test-rust test-c test-python test-go test-mcp bench-short
	@echo "make test: all checks passed"

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --locked --all-targets -- -D warnings

# The committed header must be what the build generates.
test-header: build
	@git ls-files --error-unmatch include/wsfs.h >/dev/null || { echo "include/wsfs.h is not committed"; exit 1; }
	@git diff --exit-code -- include/wsfs.h || { echo "include/wsfs.h changed on rebuild: commit it"; exit 1; }

test-rust:
	$(CARGO) test --release --locked

# The README's C example, linked against the static library.
test-c: build
	cc -Wall -Werror -Iinclude examples/c/example.c $(LIB_DIR)/libwsfs.a -lpthread -ldl -lm -o target/c-example
	./target/c-example | grep -q '"code":"outside_workspace"'

test-python: build
	WSFS_LIB=$(LIB_DIR)/libwsfs.so $(PYTHON) tests/python/smoke_test.py

test-go: build
	cd go && test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed"; exit 1; }
	cd go && $(GO) vet ./...
	cd go && $(GO) test -race -count=1 ./...
	cd go && GOGC=1 $(GO) test -count=1 ./...

# `wsfs mcp` driven by a client nobody here wrote: the official MCP Python
# SDK's stdio client (pinned in tests/mcp/requirements.txt; .ci/run installs it).
test-mcp: build
	@$(PYTHON) -c 'import mcp' 2>/dev/null || { echo "test-mcp needs the MCP Python SDK: $(PYTHON) -m pip install -r tests/mcp/requirements.txt"; exit 1; }
	cd go && $(GO) build -o ../target/wsfs ./cmd/wsfs
	$(PYTHON) tests/mcp/test_mcp_client.py target/wsfs

## bench: full benchmarks; regenerates docs/PERFORMANCE.md
bench: build
	./bench/run.sh

# Runs every benchmark once so they cannot rot; asserts no timings.
bench-short: build
	@if [ -x bench/run.sh ]; then ./bench/run.sh --short; fi

clean:
	$(CARGO) clean
