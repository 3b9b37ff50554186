#!/usr/bin/env python3
"""What a host pays to build and link libwsfs, per cargo feature (make bench-build).

Usage: bench/build_sizes.py OUT.json [--baseline REV] [--wasmtime]

1. A cold release build of the default library (`cargo build --release --locked --lib`) in an
   empty target directory: its wall clock and the crates it compiled (cargo's `Compiling`
   lines).
2. In the same target directory (dependencies already built), the library with each feature
   set (`overlay`, `exec`, `wasm`, `full`; `wasmtime` with --wasmtime, a build of tens of
   minutes): `libwsfs.so` and `libwsfs.a` as built and stripped (`strip`, `strip --strip-debug`
   for the archive), and the crates the feature set compiles (`cargo tree`, deduplicated).
3. With --baseline REV: the same cold build of the repository at REV (a git worktree), the
   library as that commit built it by default, for a before/after comparison.

Every build runs at the priority this script was started with; the machine's load is
recorded beside the figures, since a cold build's wall clock depends on it.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FEATURE_SETS = ["overlay", "exec", "wasm", "full"]


def run(cmd, cwd, env=None):
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    if proc.returncode != 0:
        sys.exit(f"build_sizes: {' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    return proc


def sizes(release_dir):
    """The library files' sizes as built and stripped, in bytes."""
    out = {}
    for name, strip_args in (("libwsfs.so", []), ("libwsfs.a", ["--strip-debug"])):
        path = os.path.join(release_dir, name)
        with tempfile.TemporaryDirectory() as tmp:
            stripped = os.path.join(tmp, name)
            run(["strip", *strip_args, "-o", stripped, path], REPO)
            out[name] = {"built": os.path.getsize(path), "stripped": os.path.getsize(stripped)}
    return out


def cold_build(src, target, features=None):
    """A cold release build of the library in `src`: seconds and crates compiled."""
    shutil.rmtree(target, ignore_errors=True)
    cmd = ["cargo", "build", "--release", "--locked", "--lib", "--target-dir", target]
    if features:
        cmd += ["--features", features]
    load = os.getloadavg()[0]
    started = time.monotonic()
    proc = run(cmd, src)
    seconds = time.monotonic() - started
    compiled = len(re.findall(r"^\s*Compiling ", proc.stderr, re.M))
    return {"seconds": round(seconds, 1), "crates_compiled": compiled, "load_before": load,
            "sizes": sizes(os.path.join(target, "release"))}


def tree_crates(features):
    """The crates a build of the library with `features` compiles (dependencies, build
    dependencies and proc macros included, each once)."""
    cmd = ["cargo", "tree", "--locked", "-p", "wsfs", "-e", "normal,build", "--prefix", "none"]
    if features:
        cmd += ["--features", features]
    lines = run(cmd, REPO).stdout.splitlines()
    return len({re.sub(r" \(\*\)$", "", line).strip() for line in lines if line.strip()})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--baseline", help="a commit to build the same way, for comparison")
    parser.add_argument("--wasmtime", action="store_true", help="also the wasmtime feature")
    args = parser.parse_args()
    root = os.path.join(REPO, "target", "bench-build")
    os.makedirs(root, exist_ok=True)
    target = os.path.join(root, "target")
    result = {"machine": {"cpus": os.cpu_count()}, "default": cold_build(REPO, target)}
    result["default"]["crates_in_tree"] = tree_crates(None)
    features = FEATURE_SETS + (["wasmtime"] if args.wasmtime else [])
    result["features"] = {}
    for feature in features:
        run(["cargo", "build", "--release", "--locked", "--lib", "--target-dir", target,
             "--features", feature], REPO)
        result["features"][feature] = {"sizes": sizes(os.path.join(target, "release")),
                                       "crates_in_tree": tree_crates(feature)}
    save(args.out, result)
    if args.baseline:
        # Outside the repository: inside it, cargo would take the checkout for a member of
        # this workspace.
        worktree = os.path.join(tempfile.mkdtemp(prefix="wsfs-baseline-"), "src")
        run(["git", "worktree", "add", "--detach", worktree, args.baseline], REPO)
        try:
            base = cold_build(worktree, os.path.join(root, "baseline-target"))
        finally:
            run(["git", "worktree", "remove", "--force", worktree], REPO)
        base["rev"] = args.baseline
        result["baseline"] = base
        save(args.out, result)
    print(json.dumps(result, indent=1))


def save(path, result):
    """Writes what was measured so far (a later stage that fails keeps the earlier ones)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
