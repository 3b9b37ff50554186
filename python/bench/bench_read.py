#!/usr/bin/env python3
"""Reading 4 KiB: wsfs (Workspace.read_file) against plain Python doing the same checks.

The baseline is what a careful pure-Python tool does for read_file's contract: resolve the
path with os.path.realpath and check it is under the root, read at most max_read_bytes (+1,
to see a cut), decode as strict UTF-8, refuse a NUL, and hash the file with SHA-256 (as
read_file reports it). Samples of the two alternate (the order flips every round), so load
from other processes hits both alike; the medians and their ratio are printed, with the load
average. Issue 9's target is a ratio of at most 1.5.

    python3 python/bench/bench_read.py [--rounds N] [--calls N] [--quick]

Uses the installed package (or WSFS_LIB). It lives in its own directory so that running it
does not put python/ (the source package, without its library) first on sys.path.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time

import wsfs

SIZE = 4096
MAX_READ_BYTES = 262144  # the library's default


def plain_read(root: str, path: str) -> tuple[str, str | None]:
    full = os.path.realpath(os.path.join(root, path))
    if os.path.commonpath([full, root]) != root:
        raise PermissionError(f"{path} leads outside the workspace")
    with open(full, "rb") as f:
        data = f.read(MAX_READ_BYTES + 1)
    truncated = len(data) > MAX_READ_BYTES
    if truncated:
        data = data[:MAX_READ_BYTES]
    text = data.decode("utf-8")  # a cut inside a character would need trimming; not here
    if "\0" in text:
        raise ValueError(f"{path} is binary")
    return text, None if truncated else hashlib.sha256(data).hexdigest()


def per_call_us(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="alternating samples of each")
    parser.add_argument("--calls", type=int, default=2000, help="calls per sample")
    parser.add_argument("--quick", action="store_true", help="a few calls, to check it runs")
    opts = parser.parse_args()
    if opts.quick:
        opts.rounds, opts.calls = 2, 50

    with tempfile.TemporaryDirectory(prefix="wsfs-bench-") as tmp:
        root = os.path.realpath(tmp)
        rel = "notes/file.txt"
        os.makedirs(os.path.join(root, "notes"))
        line = "The quick brown fox jumps over the lazy dog, 0123456789.\n"
        content = (line * (SIZE // len(line) + 1))[:SIZE]
        with open(os.path.join(root, rel), "w") as f:
            f.write(content)

        with wsfs.Workspace(root) as ws:
            got = ws.read_file(rel)
            want_text, want_sha = plain_read(root, rel)
            assert got.content == want_text == content and got.sha256 == want_sha, "results differ"

            def wsfs_read():
                ws.read_file(rel)

            def python_read():
                plain_read(root, rel)

            full_path = os.path.join(root, rel)

            def bare_read():  # for reference: no checks at all
                with open(full_path, "rb") as f:
                    f.read(MAX_READ_BYTES + 1).decode()

            wsfs_us, python_us, bare_us, ratios = [], [], [], []
            order = [(wsfs_read, wsfs_us), (python_read, python_us), (bare_read, bare_us)]
            for fn, _ in order:  # warm up
                per_call_us(fn, opts.calls)
            for i in range(opts.rounds):
                for fn, samples in order if i % 2 == 0 else reversed(order):
                    samples.append(per_call_us(fn, opts.calls))
                ratios.append(wsfs_us[-1] / python_us[-1])

    w, p = statistics.median(wsfs_us), statistics.median(python_us)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"read 4 KiB, {opts.rounds} alternating samples of {opts.calls} calls, "
        f"{os.cpu_count()} CPUs, load average {load}"
    )
    print(f"  wsfs Workspace.read_file        {w:7.1f} us/call (median)")
    print(f"  Python open().read() + checks   {p:7.1f} us/call (median)")
    print(f"  (open().read() alone            {statistics.median(bare_us):7.1f} us/call, no checks)")
    print(
        f"  ratio {w / p:.2f}x (median of per-round ratios {statistics.median(ratios):.2f}x; target <= 1.5x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
