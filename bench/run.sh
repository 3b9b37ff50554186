#!/usr/bin/env bash
# bench/run.sh [--short]
#
# Full mode (make bench): builds a fixture under ${TMPDIR:-/tmp} (including a
# 1M-entry directory and 10 GiB sparse files) and a small one on tmpfs
# (/dev/shm), runs the paired Go measurement (go/internal/benchmarks, TestPaired) and
# the Rust layer bench (benches/layers.rs) alternately three times, measures
# apply_patch against git apply (benches/patch.rs) on tmpfs and on the scratch
# disk, measures peak RSS growth per call in child processes, and regenerates
# docs/PERFORMANCE.md with bench/report.py. Raw results stay in target/bench/.
#
# The walking tools (benches/walk.rs): search_text and find_files over Go's
# source tree ($(go env GOROOT)/src) against ripgrep with equivalent flags
# (installed here with apt-get or cargo if missing; without it the comparison is
# skipped with a message), and list_dir depth=50 on 10k/100k/1M-entry trees.
#
# Recursive deletion (benches/delete.rs): delete_file on a 10,000-file tree vs
# rm -rf on an identical one, samples alternating which goes first, on the scratch
# file system and on /dev/shm if it is a tmpfs (short mode: 1,000 files, once).
#
# Wasm tools (benches/wasm.rs): a no-op Wasm tool, the example echo tool and a
# guest reading a 4 KiB workspace file against read_file, all through wsfs_call,
# a CPU loop, and the cost of loading a tool (manifest, hash, compile), on wasmi (make
# bench-wasmtime runs the same on both engines, side by side).
# The developer tools (benches/devtools.rs): shell `true` vs Command of the same,
# workspace_info cached, git_status on a 100,000-file repository vs git status.
#
# --short (make bench-short, part of make test): the same benchmarks once each
# (-benchtime=1x, one Rust iteration), without the 1M-entry directory and
# tree, the walks over $(go env GOROOT)/src/net/http only (compared with rg only
# if it is already installed), so they cannot rot. Every call's outcome is still checked, but no timing is
# asserted and nothing is written to docs/. Exits non-zero only if a
# benchmark fails to run.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
GO=${GO:-go}
CARGO=${CARGO:-cargo}
PYTHON=${PYTHON:-python3}

MODE=full
case "${1:-}" in
--short) MODE=short ;;
"") ;;
*)
	echo "usage: bench/run.sh [--short]" >&2
	exit 2
	;;
esac

# Full-mode knobs (the defaults keep make bench under 15 minutes on 2 cores).
REPS=${WSFS_BENCH_REPS:-3}                  # paired Go runs and Rust layer runs, alternating
PAIRED_MS=${WSFS_BENCH_PAIRED_MS:-1500}     # time budget of one case in one paired run
RUST_SAMPLE_MS=${WSFS_BENCH_SAMPLE_MS:-150} # target duration of one Rust sample

OUT=$ROOT/target/bench/$MODE
rm -rf "$OUT"
mkdir -p "$OUT"
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/wsfs-bench.XXXXXX")
# The change tools and apply_patch are also measured on tmpfs (their CPU cost,
# without fsync).
TMPFS=
if [[ $(df -PT /dev/shm 2>/dev/null | awk 'NR==2 {print $2}') == tmpfs ]]; then
	TMPFS=$(mktemp -d /dev/shm/wsfs-bench.XXXXXX)
else
	echo "bench: /dev/shm is not tmpfs: the tmpfs cases are left out" >&2
fi
cleanup() {
	local t=$SECONDS
	rm -rf "$SCRATCH" ${TMPFS:+"$TMPFS"}
	echo "bench: removed scratch data in $((SECONDS - t))s" >&2
}
trap cleanup EXIT

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
step() { echo "bench: [$((SECONDS))s] $*" >&2; }

# How busy the scratch disk is with other processes' I/O: the share of a few
# seconds, before anything here runs, in which it had requests in flight
# (/proc/diskstats io_ticks). fsync-bound timings mean little on a busy disk.
disk_busy() { # disk_busy SECONDS -> percent, or "?"
	local dev ticks0 ticks1
	dev=$(basename "$(df -P "$SCRATCH" | awk 'NR==2 {print $1}')")
	ticks0=$(awk -v d="$dev" '$3 == d {print $13}' /proc/diskstats)
	[[ -n $ticks0 ]] || { echo "?"; return; }
	sleep "$1"
	ticks1=$(awk -v d="$dev" '$3 == d {print $13}' /proc/diskstats)
	echo $(( (ticks1 - ticks0) / ($1 * 10) ))
}
DISK_BUSY=?
[[ $MODE == full ]] && DISK_BUSY=$(disk_busy 3)

if [[ ! -f target/release/libwsfs.a ]]; then
	step "building the library"
	$CARGO build --release --locked --features full
fi

FX=$SCRATCH/fixture
step "building the $MODE fixture in $FX"
FULL_FLAG=()
[[ $MODE == full ]] && FULL_FLAG=(-full)
(cd go && $GO run ./internal/benchmarks/cmd/wsfs-bench-fixtures -dir "$FX" "${FULL_FLAG[@]}" ${TMPFS:+-tmpfs "$TMPFS"})
cp "$FX/manifest.json" "$OUT/manifest.json"

step "building the Go benchmark binary"
(cd go && $GO test -c -o "$SCRATCH/benchmarks.test" ./internal/benchmarks)

# The Rust benches are built as the library ships (the release profile, whole-program
# optimized); the short run only checks they work, so it builds them without link-time
# optimization (the release-no-lto profile make test uses) to keep make test quick.
RUST_PROFILE=(--release)
BENCH_PROFILE=()
if [[ $MODE == short ]]; then
	RUST_PROFILE=(--profile release-no-lto)
	BENCH_PROFILE=(--profile release-no-lto)
fi

step "building the Rust benches"
$CARGO test "${RUST_PROFILE[@]}" --locked --features full --bench layers --no-run
$CARGO test "${RUST_PROFILE[@]}" --locked --features full --bench patch --no-run

# The Rust bench reads its configuration from the environment; the libtest
# arguments matter only while Cargo.toml has no [[bench]] harness = false
# entry for it (a harness = false binary ignores them).
rust_bench() { # rust_bench LOG VAR=VALUE...
	local log=$1
	shift
	env WSFS_BENCH_DIR="$FX" WSFS_BENCH_OUT="$OUT/rust.jsonl" WSFS_BENCH_SAMPLE_MS="$RUST_SAMPLE_MS" "$@" \
		$CARGO test "${RUST_PROFILE[@]}" --locked --features full --bench layers -- --ignored --exact bench_layers --nocapture \
		>>"$log" 2>&1 || {
		tail -n 30 "$log" >&2
		echo "bench: the Rust bench failed (log: $log)" >&2
		exit 1
	}
}
go_bench() {
	(cd go/internal/benchmarks && WSFS_BENCH_DIR="$FX" "$SCRATCH/benchmarks.test" -test.run='^$' -test.bench=. \
		-test.benchmem -test.count=1 "$@")
}
# The paired measurement (go/internal/benchmarks/paired.go): every comparison of a case
# made call by call, back to back, alternating which side goes first.
go_paired() { # go_paired REP VAR=VALUE...
	local rep=$1
	shift
	(cd go/internal/benchmarks && env WSFS_BENCH_DIR="$FX" WSFS_BENCH_PAIRED_OUT="$OUT/paired.jsonl" \
		WSFS_BENCH_PAIRED_REP="$rep" WSFS_BENCH_PAIRED_MS="$PAIRED_MS" "$@" \
		"$SCRATCH/benchmarks.test" -test.run='^TestPaired$' -test.count=1 -test.v) >>"$OUT/paired.log" 2>&1 || {
		tail -n 30 "$OUT/paired.log" >&2
		echo "bench: the paired Go benchmark failed (log: $OUT/paired.log)" >&2
		exit 1
	}
}
if [[ $MODE == short ]]; then
	step "running every Rust layer bench once"
	rust_bench "$OUT/rust.log" WSFS_BENCH_SHORT=1 WSFS_BENCH_RSS_OUT="$OUT/rss-rust.jsonl"
	step "running every Go benchmark once"
	go_bench -test.benchtime=1x >"$OUT/go.txt" || {
		cat "$OUT/go.txt" >&2
		exit 1
	}
	step "one round of every paired comparison"
	go_paired 1 WSFS_BENCH_SHORT=1
else
	# Go and Rust runs alternate, so the layers of the stack are measured under
	# the same conditions over time and their differences mean something.
	for rep in $(seq 1 "$REPS"); do
		step "paired Go measurement, run $rep of $REPS (${PAIRED_MS} ms per case)"
		go_paired "$rep"
		step "Rust layer bench, run $rep of $REPS"
		rust_bench "$OUT/rust.log" WSFS_BENCH_SAMPLES=1
	done
	step "measuring peak RSS growth of the Rust layers"
	rust_bench "$OUT/rust.log" WSFS_BENCH_SAMPLES=0 WSFS_BENCH_RSS_OUT="$OUT/rss-rust.jsonl"
fi

# ripgrep for the walking tools' comparison: the full bench installs it if it can.
RG=$(command -v rg || true)
if [[ -z $RG && $MODE == full ]]; then
	step "installing ripgrep for the search comparison"
	if command -v apt-get >/dev/null && { apt-get install -y -qq ripgrep >"$OUT/rg-install.log" 2>&1 ||
		{ apt-get update -qq >>"$OUT/rg-install.log" 2>&1 && apt-get install -y -qq ripgrep >>"$OUT/rg-install.log" 2>&1; }; }; then
		RG=$(command -v rg || true)
	elif $CARGO install --locked ripgrep >>"$OUT/rg-install.log" 2>&1; then
		RG=$(command -v rg || echo "${CARGO_HOME:-$HOME/.cargo}/bin/rg")
	fi
fi
[[ -n $RG ]] || echo "bench: ripgrep is not installed and could not be installed: the search_text/find_files comparison with rg is skipped" >&2
GOSRC=$($GO env GOROOT)/src
WALK_SIZES=10000,100000,1000000
WALK_SAMPLES=$REPS
if [[ $MODE == short ]]; then
	GOSRC=$GOSRC/net/http
	WALK_SIZES=10000
	WALK_SAMPLES=1
fi
step "walking tools: search_text and find_files over $GOSRC${RG:+ vs $("$RG" --version 2>/dev/null | sed -n 1p)}, list_dir trees of $WALK_SIZES entries"
mkdir -p "$SCRATCH/trees"
WSFS_WALK_SRC=$GOSRC WSFS_WALK_RG=$RG WSFS_WALK_TREES=$SCRATCH/trees WSFS_WALK_SIZES=$WALK_SIZES \
	WSFS_WALK_SAMPLES=$WALK_SAMPLES WSFS_WALK_OUT="$OUT/walk.jsonl" \
	$CARGO bench "${BENCH_PROFILE[@]}" --locked --features full --bench walk >"$OUT/walk.log" 2>&1 || {
	tail -n 30 "$OUT/walk.log" >&2
	echo "bench: the walking tools bench failed (log: $OUT/walk.log)" >&2
	exit 1
}

# read_file from Python (ctypes, or the python/ package when present) against
# plain Python doing the same checks, paired.
step "Python: read_file through libwsfs.so vs plain Python"
PY_FLAGS=(--seconds 3)
[[ $MODE == short ]] && PY_FLAGS=(--short)
for rep in $(seq 1 "$([[ $MODE == short ]] && echo 1 || echo 2)"); do
	"$PYTHON" bench/python_read.py --lib target/release/libwsfs.so --workspace "$FX/ws" \
		--out "$OUT/python.jsonl" --rep "$rep" "${PY_FLAGS[@]}" 2>>"$OUT/python.log" || {
		cat "$OUT/python.log" >&2
		echo "bench: the Python read benchmark failed" >&2
		exit 1
	}
done

# The Go package's envelope decoders (issue 8): its hand-written reader,
# jsontext tokens with hand dispatch, encoding/json, json v2.
step "Go: envelope decoders compared"
(cd go && env WSFS_DECODE_OUT="$OUT/decode.jsonl" $([[ $MODE == short ]] && echo WSFS_BENCH_SHORT=1) \
	$GO test -count=1 -run '^TestDecodeBench$' . >"$OUT/decode.log" 2>&1) || {
	cat "$OUT/decode.log" >&2
	echo "bench: the decoder benchmark failed" >&2
	exit 1
}

# apply_patch vs git apply (benches/patch.rs), on tmpfs and on the scratch disk.
SCRATCH_FS=$(df -PT "$SCRATCH" | awk 'NR==2 {print $2}')
PATCH_DIRS="disk-$SCRATCH_FS=$SCRATCH/patch"
if [[ -n $TMPFS ]]; then
	PATCH_DIRS="tmpfs=$TMPFS/patch $PATCH_DIRS"
else
	echo "bench: /dev/shm is not tmpfs; apply_patch is measured on the disk only" >&2
fi
mkdir -p "$SCRATCH/patch"
patch_bench() {
	env WSFS_PATCH_BENCH_DIRS="$PATCH_DIRS" WSFS_PATCH_BENCH_OUT="$OUT/patch.jsonl" "$@" \
		$CARGO test "${RUST_PROFILE[@]}" --locked --features full --bench patch >>"$OUT/patch.log" 2>&1 || {
		tail -n 30 "$OUT/patch.log" >&2
		echo "bench: the apply_patch bench failed (log: $OUT/patch.log)" >&2
		exit 1
	}
}
if [[ $MODE == short ]]; then
	step "running the apply_patch bench once"
	patch_bench WSFS_BENCH_SHORT=1
else
	step "apply_patch vs git apply ($REPS samples per path)"
	patch_bench WSFS_PATCH_BENCH_SAMPLES="$REPS"
fi
# On the scratch file system (a disk: mostly waiting for it) and, where there is one, on a
# tmpfs (what is left is wsfs's and rm's own cost). Short mode: one small tree, on the tmpfs
# if there is one.
DELETE_FILES=10000
DELETE_SAMPLES=$REPS
DELETE_DIRS="$(df -PT "$SCRATCH" | awk 'NR==2 {print $2}')=$SCRATCH/delete"
DELETE_TMPFS=
if [[ -d /dev/shm && -w /dev/shm && $(df -PT /dev/shm | awk 'NR==2 {print $2}') == tmpfs ]]; then
	DELETE_TMPFS=$(mktemp -d /dev/shm/wsfs-bench.XXXXXX)
	DELETE_DIRS="$DELETE_DIRS,tmpfs=$DELETE_TMPFS"
fi
if [[ $MODE == short ]]; then
	DELETE_FILES=1000
	DELETE_SAMPLES=1
	[[ -n $DELETE_TMPFS ]] && DELETE_DIRS="tmpfs=$DELETE_TMPFS"
fi
step "recursive delete_file vs rm -rf: trees of $DELETE_FILES files ($DELETE_DIRS)"
mkdir -p "$SCRATCH/delete"
WSFS_DELETE_DIRS=$DELETE_DIRS WSFS_DELETE_FILES=$DELETE_FILES WSFS_DELETE_SAMPLES=$DELETE_SAMPLES \
	WSFS_DELETE_OUT="$OUT/delete.jsonl" $CARGO bench "${BENCH_PROFILE[@]}" --locked --features full --bench delete >"$OUT/delete.log" 2>&1 || {
	tail -n 30 "$OUT/delete.log" >&2
	if [[ -n $DELETE_TMPFS ]]; then rm -rf "$DELETE_TMPFS"; fi
	echo "bench: the delete bench failed (log: $OUT/delete.log)" >&2
	exit 1
}
if [[ -n $DELETE_TMPFS ]]; then rm -rf "$DELETE_TMPFS"; fi

# The overlay session store (benches/overlay.rs): diff in a 10k and a 100k base (short: 2k
# and 4k), a checkpoint after 100 touched files, commit of 1,000 files vs host writes.
step "overlay sessions: diff, checkpoint, commit vs host writes"
mkdir -p "$SCRATCH/overlay"
env WSFS_OVERLAY_DIR="$SCRATCH/overlay" WSFS_OVERLAY_OUT="$OUT/overlay.jsonl" \
	$([[ $MODE == short ]] && echo WSFS_OVERLAY_SHORT=1) \
	$CARGO bench "${BENCH_PROFILE[@]}" --locked --features full --bench overlay >"$OUT/overlay.log" 2>&1 || {
	tail -n 30 "$OUT/overlay.log" >&2
	echo "bench: the overlay bench failed (log: $OUT/overlay.log)" >&2
	exit 1
}

# Overlay mode's reads (benches/overlay_view.rs): an untouched and a touched 4 KiB file
# through wsfs_call, paired against host mode on the same base.
VIEW_SAMPLES=20000
[[ $MODE == short ]] && VIEW_SAMPLES=200
step "overlay mode: read_file of an untouched and a touched file vs host mode ($VIEW_SAMPLES paired samples)"
mkdir -p "$SCRATCH/overlay"
env WSFS_OVERLAY_VIEW_DIR="$SCRATCH/overlay" WSFS_OVERLAY_VIEW_OUT="$OUT/overlay_view.jsonl" \
	WSFS_OVERLAY_VIEW_SAMPLES=$VIEW_SAMPLES \
	$CARGO bench "${BENCH_PROFILE[@]}" --locked --features full --bench overlay_view >"$OUT/overlay_view.log" 2>&1 || {
	tail -n 30 "$OUT/overlay_view.log" >&2
	echo "bench: the overlay view bench failed (log: $OUT/overlay_view.log)" >&2
	exit 1
}

WASM_SAMPLES=2000
[[ $MODE == short ]] && WASM_SAMPLES=20
step "Wasm tools through wsfs_call: a no-op tool, echo, a 4 KiB read vs read_file, loading ($WASM_SAMPLES samples)"
WSFS_WASM_SAMPLES=$WASM_SAMPLES WSFS_WASM_OUT="$OUT/wasm.jsonl" \
	$CARGO bench "${BENCH_PROFILE[@]}" --locked --features full --bench wasm >"$OUT/wasm.log" 2>&1 || {
	tail -n 30 "$OUT/wasm.log" >&2
	echo "bench: the wasm bench failed (log: $OUT/wasm.log)" >&2
	exit 1
}

# The developer tools (benches/devtools.rs): the confined runner's overhead against
# std::process::Command of the same program, workspace_info's cache, and git_status on a
# 100,000-file repository against git status run directly (short mode: 2,000 files, 2 samples).
DEVTOOLS_FILES=100000
DEVTOOLS_SAMPLES=15
if [[ $MODE == short ]]; then
	DEVTOOLS_FILES=2000
	DEVTOOLS_SAMPLES=2
fi
step "developer tools: the runner, workspace_info cached, git_status on $DEVTOOLS_FILES files"
mkdir -p "$SCRATCH/devtools"
WSFS_DEVTOOLS_DIR="$SCRATCH/devtools" WSFS_DEVTOOLS_FILES=$DEVTOOLS_FILES \
	WSFS_DEVTOOLS_SAMPLES=$DEVTOOLS_SAMPLES WSFS_DEVTOOLS_OUT="$OUT/devtools.jsonl" \
	$CARGO bench "${BENCH_PROFILE[@]}" --locked --features full --bench devtools >"$OUT/devtools.log" 2>&1 || {
	tail -n 30 "$OUT/devtools.log" >&2
	echo "bench: the developer tools bench failed (log: $OUT/devtools.log)" >&2
	exit 1
}

step "measuring peak RSS growth of the Go paths"
(cd go/internal/benchmarks && WSFS_BENCH_DIR="$FX" WSFS_BENCH_RSS_OUT="$OUT/rss-go.jsonl" \
	"$SCRATCH/benchmarks.test" -test.run='^TestPeakRSS$' -test.count=1 >"$OUT/rss-go.log" 2>&1) || {
	cat "$OUT/rss-go.log" >&2
	exit 1
}

WSFS_M_NPROC=$(nproc) \
	WSFS_M_CPU=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || echo unknown) \
	WSFS_M_KERNEL=$(uname -sr) \
	WSFS_M_MEM=$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) \
	WSFS_M_GO=$($GO version | sed 's/^go version //') \
	WSFS_M_RUSTC=$(rustc --version) \
	WSFS_M_SCRATCH_FS=$(df -PT "$SCRATCH" | awk 'NR==2 {print $2}') \
	WSFS_M_TMPFS="${TMPFS:+tmpfs}" WSFS_M_DISK_BUSY="$DISK_BUSY" \
	WSFS_M_LOAD_START=$LOAD_START WSFS_M_LOAD_END="$(cut -d' ' -f1-3 /proc/loadavg)" \
	WSFS_M_MODE=$MODE WSFS_M_REPS=$REPS WSFS_M_PAIRED_MS=$PAIRED_MS \
	WSFS_M_RUST_SAMPLE_MS=$RUST_SAMPLE_MS WSFS_M_RG="$([[ -n $RG ]] && "$RG" --version 2>/dev/null | sed -n 1p || echo none)" \
	WSFS_M_WALK_SRC=$GOSRC \
	"$PYTHON" -c 'import json, os, sys
m = {k[7:].lower(): v for k, v in os.environ.items() if k.startswith("WSFS_M_")}
json.dump(m, open(sys.argv[1], "w"), indent=1, sort_keys=True)' "$OUT/machine.json"

if [[ $MODE == short ]]; then
	# Exercise the report generator too, but never write into docs/.
	step "checking the report generator"
	"$PYTHON" bench/report.py --dir "$OUT" --out "$OUT/PERFORMANCE.md" --short
	step "short benchmarks passed (no timings asserted)"
else
	step "writing docs/PERFORMANCE.md"
	mkdir -p docs
	"$PYTHON" bench/report.py --dir "$OUT" --out docs/PERFORMANCE.md --elapsed "$SECONDS"
	step "done: docs/PERFORMANCE.md (raw results in $OUT)"
fi
