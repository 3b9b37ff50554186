#!/usr/bin/env python3
"""What each Wasm engine adds to building wsfs (docs/PERFORMANCE.md, "Wasm engines").

Usage, after two cold release builds with `--timings` (each in an empty target directory):
    cargo build --release --locked --timings                       # target/
    cargo build --release --locked --timings --features wasmtime --target-dir target/wasmtime
    bench/wasm_build.py target/cargo-timings/cargo-timing.html \
        target/wasmtime/cargo-timings/cargo-timing.html

For each engine it names the crates only that engine brings (from `cargo metadata`: the
crates wsfs reaches only through wasmi, wasmi_core, wasmi_wasi and wiggle; the crates the
wasmtime feature adds) and sums their compile times from the timing reports (each unit's own
duration: CPU-bound work that a 2-core machine runs at most two at a time). It also prints the
libraries' sizes, as built and stripped.
"""
import json
import os
import re
import subprocess
import sys

WASMI_ROOTS = {"wasmi", "wasmi_core", "wasmi_wasi", "wiggle"}


def graph(features):
    cmd = ["cargo", "metadata", "--format-version", "1", "--locked"] + features
    meta = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    names = {p["id"]: (p["name"], p["version"]) for p in meta["packages"]}
    root = meta["resolve"]["root"]

    def reach(skip):
        seen, todo = set(), [root]
        while todo:
            node = nodes[todo.pop()]
            for dep in node["deps"]:
                # Normal and build dependencies only: what `cargo build` compiles.
                if not any(k["kind"] in (None, "build") for k in dep["dep_kinds"]):
                    continue
                if names[dep["pkg"]][0] in skip or dep["pkg"] in seen:
                    continue
                seen.add(dep["pkg"])
                todo.append(dep["pkg"])
        return {names[p] for p in seen}

    return reach, names


def units(html):
    text = open(html, encoding="utf-8").read()
    data = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", text, re.S).group(1))
    out = {}
    for u in data:
        out[(u["name"].replace("-", "_"), u["version"])] = \
            out.get((u["name"].replace("-", "_"), u["version"]), 0.0) + u["duration"]
    return out


def summed(crates, timed):
    keys = {(n.replace("-", "_"), v) for n, v in crates}
    return sum(d for k, d in timed.items() if k in keys), len(keys)


def size(path):
    if not os.path.exists(path):
        return "missing"
    stripped = path + ".stripped"
    subprocess.run(["strip", "-o", stripped, path], check=True)
    out = f"{os.path.getsize(path) / 2**20:.1f} MiB ({os.path.getsize(stripped) / 2**20:.1f} MiB stripped)"
    os.remove(stripped)
    return out


def main():
    default_html, wasmtime_html = sys.argv[1:3]
    reach, _ = graph([])
    everything = reach(set())
    wasmi_only = everything - reach(WASMI_ROOTS)
    reach_w, _ = graph(["--features", "wasmtime"])
    wasmtime_only = reach_w(set()) - everything
    d, w = units(default_html), units(wasmtime_html)
    for label, crates, timed in (("wasmi", wasmi_only, d), ("wasmtime", wasmtime_only, w)):
        secs, n = summed(crates, timed)
        print(f"{label}: {n} crates only it brings, {secs:.0f} s of compile time summed over them")
    print(f"all units, default build: {sum(d.values()):.0f} s summed; with wasmtime: {sum(w.values()):.0f} s")
    for label, html in (("default", default_html), ("wasmtime", wasmtime_html)):
        release = os.path.join(os.path.dirname(os.path.dirname(html)), "release")
        print(f"{label}: libwsfs.so {size(os.path.join(release, 'libwsfs.so'))}, "
              f"libwsfs.a {size(os.path.join(release, 'libwsfs.a'))}")


if __name__ == "__main__":
    main()
