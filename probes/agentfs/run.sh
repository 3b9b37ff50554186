#!/usr/bin/env bash
# Re-runs the whole agentfs-sdk probe (see RESULTS.md): [REPS=n] ./run.sh [all|build|deps|facts|bench|rss|crash|lock|clash]
# Results go to target/results/*.txt. Nothing here is built or run by wsfs's make test or CI.
set -uo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="$PWD/target"
out=target/results
mkdir -p "$out"
what=${1:-all}
load() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (nproc $(nproc))"; }
runner=target/release/probe

build_runner() { cargo build --release --locked --bin probe >/dev/null 2>&1 || cargo build --release --locked --bin probe; }

# Cold release builds of the two tiny cdylibs, each in a fresh target dir (sources already
# fetched: download time is not counted), repeated; then their sizes.
do_build() {
  cargo fetch --locked >/dev/null
  {
    echo "rustc: $(rustc --version)"; echo "cargo: $(cargo --version)"
    for rep in $(seq 1 "${REPS:-2}"); do
      for which in without with; do
        dir="target/cold-$which"
        rm -rf "$dir"
        before=$(cut -d' ' -f1-3 /proc/loadavg)
        /usr/bin/time -f "%e s wall, %U s user, %S s sys, max RSS %M KiB" -o "$out/time.tmp" \
          cargo build --release --locked -q -p "probe-cdylib-$which" --target-dir "$dir"
        rc=$?
        echo "cold build $which (run $rep): rc $rc, $(cat "$out/time.tmp"), load before $before, after $(cut -d' ' -f1-3 /proc/loadavg)"
      done
    done
    for which in without with; do
      so="target/cold-$which/release/libprobe_cdylib_${which}.so"
      cp "$so" "$out/$which.so" && strip -o "$out/$which.stripped.so" "$so"
      echo "size $which: $(stat -c %s "$so") bytes as built (debug = 1, as wsfs), $(stat -c %s "$out/$which.stripped.so") stripped"
      echo "  crates compiled: $(ls "target/cold-$which/release/deps/" | grep -c '\.rlib$') rlibs; NEEDED: $(readelf -d "$so" | grep NEEDED | sed 's/.*\[\(.*\)\]/\1/' | tr '\n' ' ')"
    done
    # The two libraries do work from C (same call, same arguments shape).
    cat > "$out/call.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW); if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
  int (*f)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(h, "probe_write");
  int rc = f(argv[2], argv[3]); printf("%s probe_write -> %d\n", argv[1], rc); return rc != 0;
}
C
    cc -O2 -o "$out/call" "$out/call.c" -ldl
    rm -rf /dev/shm/agentfs-probe-c && mkdir -p /dev/shm/agentfs-probe-c
    "$out/call" "$PWD/$out/without.so" /dev/shm/agentfs-probe-c/dir hello.txt
    "$out/call" "$PWD/$out/with.so" /dev/shm/agentfs-probe-c/probe.db /hello.txt
    rm -rf /dev/shm/agentfs-probe-c
    load
  } 2>&1 | tee "$out/build.txt"
}

# Dependency counts and whether --locked builds on this toolchain.
do_deps() {
  {
    echo "cargo tree | wc -l (probe crate, agentfs-sdk + tokio rt): $(cargo tree --locked -p agentfs-probe | wc -l)"
    echo "cargo tree -p probe-cdylib-with | wc -l: $(cargo tree --locked -p probe-cdylib-with | wc -l)"
    echo "cargo tree -p probe-cdylib-without | wc -l: $(cargo tree --locked -p probe-cdylib-without | wc -l)"
    echo "distinct crates built for this target (normal + build deps), agentfs-sdk: $(cargo tree --locked -p probe-cdylib-with -e normal,build --prefix none | sed 's/ (\*)//; s/ (proc-macro)//' | sort -u | wc -l)"
    echo "packages in Cargo.lock (all targets): $(grep -c '^name = ' Cargo.lock)"
    echo "crates that compile C or need system libraries:"
    cargo tree --locked -p probe-cdylib-with -e normal,build --prefix none | sed 's/ (\*)//; s/ (proc-macro)//' | sort -u |
      grep -E '^(cc|cmake|bindgen|pkg-config|openssl-sys|openssl|native-tls|libmimalloc-sys|mimalloc|hyper|hyper-tls|io-uring) ' | sed 's/^/  /'
    echo "highest rust-version declared in the tree:"
    cargo metadata --locked --format-version 1 2>/dev/null | python3 -c '
import json,sys
m=json.load(sys.stdin); rv=[(tuple(int(x) for x in p["rust_version"].split(".")), p["name"]+" "+p["version"], p["rust_version"]) for p in m["packages"] if p.get("rust_version")]
rv.sort(); print("  ", rv[-1][2], "(" + rv[-1][1] + ")"); print("   agentfs-sdk/turso:", [(p["name"],p.get("rust_version")) for p in m["packages"] if p["name"] in ("agentfs-sdk","turso","turso_core")])'
    echo "wsfs declares rust-version = $(grep -m1 rust-version ../../Cargo.toml | cut -d'"' -f2)"
  } 2>&1 | tee "$out/deps.txt"
}

do_clash() {
  { echo "alloc-clash (a binary with its own #[global_allocator] that links agentfs-sdk):"
    cargo build --release --locked --features alloc-clash --bin alloc-clash 2>&1 | grep -E '^error|global allocator|^  = note' | head -5
    echo "rc ${PIPESTATUS[0]} (non-zero expected)"; } 2>&1 | tee "$out/clash.txt"
}

do_run() { # name, args...
  local name=$1; shift
  { load; "$runner" "$@"; load; } 2>&1 | tee "$out/$name.txt"
}

case $what in
  build) do_build ;;
  deps) do_deps ;;
  clash) do_clash ;;
  facts) build_runner && do_run facts facts ;;
  bench) build_runner && do_run bench bench ;;
  rss) build_runner && do_run rss rss ;;
  crash) build_runner && do_run crash crash 40 ;;
  lock) build_runner && do_run lock lock ;;
  all) do_build; do_deps; do_clash; build_runner && { do_run facts facts; do_run bench bench; do_run rss rss; do_run crash crash 40; do_run lock lock; } ;;
  *) echo "usage: $0 [all|build|deps|facts|bench|rss|crash|lock|clash]"; exit 2 ;;
esac
