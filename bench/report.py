#!/usr/bin/env python3
"""Generates docs/PERFORMANCE.md from the raw results of bench/run.sh.

Usage: bench/report.py --dir target/bench/full --out docs/PERFORMANCE.md [--short] [--elapsed S]

Reads (all written by bench/run.sh into --dir):
  manifest.json         the benchmark cases (from go/benchmarks' fixture)
  machine.json          nproc, CPU, kernel, tool versions, scratch filesystem
  go.txt / go-N.txt     `go test -bench -benchmem` output, one sample per benchmark and file
  rust.jsonl            benches/layers.rs samples
  rss-go.jsonl, rss-rust.jsonl   peak RSS growth of one call, per case and path
  walk.jsonl            benches/walk.rs: the walking tools vs ripgrep, list_dir trees
  patch.jsonl           benches/patch.rs samples: apply_patch vs git apply, per filesystem
  delete.jsonl          benches/delete.rs: recursive delete_file vs rm -rf

Every number in the output is computed here from those files: medians over the samples,
ratios of medians, and the targets' verdicts. Python 3 standard library only.
"""

import argparse
import datetime
import glob
import json
import os
import re
import statistics
import sys

# The paths, in the order of the wsfs stack, with the names the tables use.
NAMES = {
    "floor": "syscall floor",
    "baseline": "pure-Go baseline",
    "baseline_fantasy": "baseline as fantasy tool",
    "core": "Rust core",
    "cabi_typed": "C ABI, typed API's call",
    "cabi_fantasy": "C ABI, fantasy's call",
    "cgo_typed": "cgo, typed API's call",
    "cgo_fantasy": "cgo, fantasy's call",
    "typed": "typed Go API",
    "fantasy": "fantasy tool",
}

FLOOR_DESC = {
    "read_file": "openat, fstat, read of at most max_read_bytes + 1 bytes, close (for a "
    "range of lines: 64 KiB reads to the end of the file, newlines counted, the range copied "
    "out)",
    "write_file": "openat + flock + fstat of the existing file, openat(O_EXCL) of a temp file, "
    "write, fchown, fchmod, fsync, close, renameat, openat + fsync + close of the directory",
    "append_file": "openat(O_APPEND), fstat, flock, write, fdatasync, close",
    "edit_file": "openat, fstat, flock, read of the whole file, then the write_file sequence "
    "for the new content (the replacement is a copy at a known offset: no search)",
    "list_dir": "openat(O_DIRECTORY), getdents64 to the end, newfstatat of the first 500 "
    "names returned (no sorting), close",
}

LAYER_DESC = {
    "core": "`wsfs::run_tool`: argument parsing (serde), resolution beneath the root "
    "(`openat2(RESOLVE_BENEATH)`, `lstat` of the leaf), the tool itself with its checks",
    "cabi": "the C ABI: handle lookup, call options, parsing the argument JSON, rendering the "
    "text, building the envelope (JSON, or a JSON header and the unescaped text or content in "
    "the raw output modes), the C string, `wsfs_string_free`",
    "cgo": "the cgo transition and copying the result into Go memory",
    "go": "the Go package: UTF-8/NUL checks, building the argument JSON, a cancel token and "
    "`context.AfterFunc` (the context is cancellable, as an agent's is), decoding the "
    "envelope into the result",
    "fantasy": "fantasy decoding the call's JSON into the input struct, the Go package's "
    "context handling and envelope decoding, the `ToolResponse`",
}

# Targets of the issue.
SMALL = [
    ("read_4k", "read 4 KiB"),
    ("append_100b", "append 100 B"),
    ("list_50", "list 50 entries"),
]
LARGE = [
    ("edit_1m", "edit 1 MiB"),
    ("read_64m_capped", "read capped at 256 KiB"),
    ("list_100k", "list 500 of 100k entries"),
]
SPARSE = [("read_sparse10g_text", "text head"), ("read_sparse10g_zeros", "all zeros")]
RANGE_64M = "read_range_64m"
LIST_1M = "list_1m"
PATCH_TARGET = "patch_100_hunks_10k_lines"


def ratio_of(a, b):
    return a / b if a is not None and b else None


def fs_name(label):
    if label == "tmpfs":
        return "tmpfs (fsync costs nothing)"
    if label.startswith("disk-"):
        return f"disk ({label[5:]}, every fsync reaches the device)"
    return label
# A sort key of list_dir's bounded heap: the name's bytes plus a Vec header.
SORT_KEY_OVERHEAD = 24


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--short", action="store_true")
    p.add_argument("--elapsed", type=float, default=None)
    return p.parse_args()


GO_LINE = re.compile(
    r"^Benchmark(?P<kind>Tools|Context)/(?P<case>[^/\s]+)/(?P<path>[^\s]+?)(?:-\d+)?\s+(?P<n>\d+)\s+"
    r"(?P<ns>[\d.]+) ns/op(?:\s+(?P<b>[\d.]+) B/op)?(?:\s+(?P<a>[\d.]+) allocs/op)?"
)


def load(d):
    samples = {}  # (case, path) -> list of (ns, bytes, allocs)
    files = sorted(glob.glob(os.path.join(d, "go.txt")) + glob.glob(os.path.join(d, "go-*.txt")))
    for f in files:
        for line in open(f, encoding="utf-8"):
            m = GO_LINE.match(line)
            if m:
                path = m["path"] if m["kind"] == "Tools" else "ctx:" + m["path"]
                samples.setdefault((m["case"], path), []).append(
                    (float(m["ns"]), float(m["b"] or 0), float(m["a"] or 0))
                )
    rust = os.path.join(d, "rust.jsonl")
    if os.path.exists(rust):
        for line in open(rust, encoding="utf-8"):
            if line.strip():
                r = json.loads(line)
                samples.setdefault((r["case"], r["layer"]), []).append(
                    (r["ns_per_op"], r["bytes_per_op"], r["allocs_per_op"])
                )
    rss = {}
    for name in ("rss-go.jsonl", "rss-rust.jsonl"):
        f = os.path.join(d, name)
        if os.path.exists(f):
            for line in open(f, encoding="utf-8"):
                if line.strip():
                    r = json.loads(line)
                    rss[(r["case"], r["path"])] = r
    patch = {}  # (case, fs_label, path) -> list of ns, plus ("desc", case) -> description
    pf = os.path.join(d, "patch.jsonl")
    if os.path.exists(pf):
        for line in open(pf, encoding="utf-8"):
            if line.strip():
                r = json.loads(line)
                patch.setdefault((r["case"], r["fs_label"], r["path"]), []).append(r["ns_per_op"])
                patch[("desc", r["case"])] = r["desc"]
    manifest = json.load(open(os.path.join(d, "manifest.json"), encoding="utf-8"))
    machine = {}
    mf = os.path.join(d, "machine.json")
    if os.path.exists(mf):
        machine = json.load(open(mf, encoding="utf-8"))
    return samples, rss, patch, manifest, machine, files


class Results:
    def __init__(self, samples, rss, patch=None):
        self.samples = samples
        self.rss = rss
        self.patch = patch or {}

    def patch_t(self, case, fs, path):
        """Median ns/op of the apply_patch bench, or None."""
        s = self.patch.get((case, fs, path))
        return statistics.median(s) if s else None

    def patch_cases(self):
        """(case, fs_label) pairs measured, in the order measured."""
        seen = []
        for key in self.patch:
            if key[0] != "desc" and (key[0], key[1]) not in seen:
                seen.append((key[0], key[1]))
        return seen

    def t(self, case, path):
        """Median ns/op, or None."""
        s = self.samples.get((case, path))
        return statistics.median(x[0] for x in s) if s else None

    def spread(self, case, path):
        """(max - min) / median of the samples, or None."""
        s = self.samples.get((case, path))
        if not s or len(s) < 2:
            return None
        ns = [x[0] for x in s]
        med = statistics.median(ns)
        return (max(ns) - min(ns)) / med if med else None

    def n(self, case, path):
        return len(self.samples.get((case, path), []))

    def mem(self, case, path):
        s = self.samples.get((case, path))
        if not s:
            return None
        return statistics.median(x[1] for x in s), statistics.median(x[2] for x in s)

    def rss_kib(self, case, path):
        r = self.rss.get((case, path))
        return None if r is None or r.get("error") else r["growth_kib"]

    def ratio(self, case, a, b):
        ta, tb = self.t(case, a), self.t(case, b)
        return ta / tb if ta is not None and tb else None


def fmt_t(ns):
    if ns is None:
        return "–"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs" if ns < 1e5 else f"{ns / 1e3:.0f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_delta(ns):
    if ns is None:
        return "–"
    sign = "+" if ns >= 0 else "−"
    return sign + fmt_t(abs(ns))


def fmt_r(r):
    return "–" if r is None else f"{r:.2f}×"


def fmt_kib(k):
    if k is None:
        return "–"
    if abs(k) >= 1024:
        return f"{k / 1024:.1f} MiB"
    return f"{k:.0f} KiB"


def fmt_bytes(b):
    if b is None:
        return "–"
    if b >= 1 << 20:
        return f"{b / (1 << 20):.1f} MiB"
    if b >= 1 << 10:
        return f"{b / 1024:.1f} KiB"
    return f"{b:.0f} B"


def fmt_spread(s):
    return "–" if s is None else f"±{s * 50:.0f}%"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def verdict(ok, noise=None):
    if ok is None:
        return "not measured"
    if ok:
        return "met"
    if noise is not None:
        return f"**not met** (within the run-to-run spread, {fmt_spread(noise)})"
    return "**not met**"


def evaluate(res, cases):
    """The targets: list of dicts with label, measured text, ok, and for misses a breakdown key."""
    rows = []

    def ratio_row(case, label, kind, limit):
        a, b = ("typed", "baseline") if kind == "typed" else ("fantasy", "baseline_fantasy")
        r = res.ratio(case, a, b)
        what = "typed Go API vs pure-Go baseline" if kind == "typed" else (
            "fantasy tool vs baseline as fantasy tool"
        )
        measured = "–" if r is None else (
            f"{fmt_r(r)} ({fmt_t(res.t(case, a))} vs {fmt_t(res.t(case, b))})"
        )
        ok = None if r is None else r <= limit
        noise = None
        if ok is False:
            # A miss smaller than the run-to-run spread of the two paths is flagged as such.
            spreads = [x for x in (res.spread(case, a), res.spread(case, b)) if x is not None]
            if spreads and r - limit < max(spreads) / 2:
                noise = max(spreads)
        rows.append({
            "label": f"{label}: {what} ≤ {limit:.1f}×",
            "measured": measured,
            "ok": ok, "noise": noise,
            "case": case, "chain": kind,
        })

    for case, label in SMALL:
        ratio_row(case, label, "typed", 1.3)
        ratio_row(case, label, "fantasy", 1.3)
    for case, label in LARGE:
        ratio_row(case, label, "typed", 1.0)
        ratio_row(case, label, "fantasy", 1.0)

    c1m = cases.get(LIST_1M)
    sort_keys_kib = None
    if c1m:
        # The names of the 500 kept entries ("entry-0000000.txt") plus a Vec header each.
        sort_keys_kib = c1m["expect_entries"] * (len("entry-0000000.txt") + SORT_KEY_OVERHEAD) / 1024
    for kind in ("typed", "fantasy"):
        t = res.t(LIST_1M, kind)
        rows.append({
            "label": f"list_dir, 1M entries ({NAMES[kind]}): < 1 s",
            "measured": fmt_t(t), "ok": None if t is None else t < 1e9,
            "case": LIST_1M, "chain": kind,
        })
    for kind in ("typed", "fantasy"):
        k = res.rss_kib(LIST_1M, kind)
        beyond = None if k is None else k - (sort_keys_kib or 0)
        rows.append({
            "label": f"list_dir, 1M entries ({NAMES[kind]}): RSS growth < 8 MiB beyond the sort keys",
            "measured": "–" if k is None else
            f"{fmt_kib(k)} (sort keys {fmt_kib(sort_keys_kib)})",
            "ok": None if beyond is None else beyond < 8 * 1024,
            "case": LIST_1M, "chain": kind, "rss": True,
        })
    for case, fs in res.patch_cases():
        if case != PATCH_TARGET:
            continue
        r = ratio_of(res.patch_t(case, fs, "cabi"), res.patch_t(case, fs, "git_apply"))
        rows.append({
            "label": f"apply_patch, 100 hunks on a 10,000-line file, {fs_name(fs)}: C ABI vs `git apply` ≤ 1.0×",
            "measured": "–" if r is None else f"{fmt_r(r)} ({fmt_t(res.patch_t(case, fs, 'cabi'))} vs "
            f"{fmt_t(res.patch_t(case, fs, 'git_apply'))})",
            "ok": None if r is None else r <= 1.0,
            "case": case, "chain": "patch",
        })
    for case, what in SPARSE:
        for kind in ("typed", "fantasy"):
            t = res.t(case, kind)
            rows.append({
                "label": f"read_file, 10 GiB sparse file, {what} ({NAMES[kind]}): < 5 ms",
                "measured": fmt_t(t), "ok": None if t is None else t < 5e6,
                "case": case, "chain": kind,
            })
        for kind in ("typed", "fantasy"):
            k = res.rss_kib(case, kind)
            rows.append({
                "label": f"read_file, 10 GiB sparse file, {what} ({NAMES[kind]}): RSS growth < 2 MiB",
                "measured": fmt_kib(k), "ok": None if k is None else k < 2 * 1024,
                "case": case, "chain": kind, "rss": True,
            })
    # The time of this case is reported (headline, tables), not held to a target.
    for kind in ("typed", "fantasy"):
        k = res.rss_kib(RANGE_64M, kind)
        rows.append({
            "label": f"read_file, lines 500000-500100 of a 64 MiB file ({NAMES[kind]}): "
                     "RSS growth < 2 MiB",
            "measured": fmt_kib(k), "ok": None if k is None else k < 2 * 1024,
            "case": RANGE_64M, "chain": kind, "rss": True,
        })
    return rows


def describe_modes(cases, key):
    """How a path calls the C ABI, per tool, from the manifest's call modes."""
    groups = {}
    for c in cases.values():
        m = c.get(key) or {}
        how = f"`\"{m.get('output', '?')}\"` output"
        if m.get("content_buffer"):
            how = "the content as a separate buffer, " + how
        groups.setdefault(how, [])
        if c["tool"] not in groups[how]:
            groups[how].append(c["tool"])
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(", ".join(tools) + ": " + how for how, tools in groups.items())


def chain(kind):
    """The layers of a path, outermost last: (label, path measured, description key)."""
    if kind == "typed":
        return [("core", "core", "core"), ("C ABI", "cabi_typed", "cabi"),
                ("cgo", "cgo_typed", "cgo"), ("Go package", "typed", "go")]
    return [("core", "core", "core"), ("C ABI", "cabi_fantasy", "cabi"),
            ("cgo", "cgo_fantasy", "cgo"), ("fantasy + Go package", "fantasy", "fantasy")]


def breakdown(res, case, kind):
    """Rows (layer, cumulative, own cost, share) for a path's chain."""
    rows, prev = [], 0.0
    total = res.t(case, kind)
    for label, path, _ in chain(kind):
        t = res.t(case, path)
        own = None if t is None else t - prev
        share = None if own is None or not total else own / total
        rows.append((label, t, own, share))
        prev = t if t is not None else prev
    return rows


def explain_miss(res, cases, row):
    case, kind = row["case"], row["chain"]
    if kind == "patch":
        return [f"#### {row['label']}: {row['measured']}", "",
                "See [apply_patch vs git apply](#apply_patch-vs-git-apply): `git apply` does not "
                "fsync; apply_patch fsyncs the new file and its directory (and, for several files, "
                "its journal), so on a disk the gap is the device's fsync latency.", ""]
    c = cases[case]
    base = "baseline" if kind == "typed" else "baseline_fantasy"
    out = [f"#### {row['label']}: {row['measured']}", ""]
    if row.get("rss"):
        out.append(
            f"Peak RSS growth of one call: floor {fmt_kib(res.rss_kib(case, 'floor'))}, "
            f"baseline {fmt_kib(res.rss_kib(case, 'baseline'))}, "
            f"Rust core {fmt_kib(res.rss_kib(case, 'core'))}, "
            f"C ABI {fmt_kib(res.rss_kib(case, 'cabi_typed'))}, "
            f"{NAMES[kind]} {fmt_kib(res.rss_kib(case, kind))}."
        )
        out.append("")
        return out
    rows = breakdown(res, case, kind)
    def share(own, s):
        if own is not None and own < 0:
            return "– (faster than the layer below: noise)"
        return "–" if s is None else f"{s * 100:.0f}%"
    out.append(table(
        ["layer", "cumulative", "this layer", "share of the total"],
        [(label, fmt_t(t), fmt_delta(own), share(own, s)) for label, t, own, s in rows],
    ))
    out.append("")
    floor, core, total, b = (res.t(case, "floor"), res.t(case, "core"),
                             res.t(case, kind), res.t(case, base))
    biggest = max((r for r in rows if r[2] is not None), key=lambda r: r[2], default=None)
    text = []
    if floor is not None:
        text.append(
            f"The floor ({FLOOR_DESC[c['tool']]}) is {fmt_t(floor)}: the Rust core is "
            f"{fmt_r(core / floor if core else None)} the floor, the {NAMES[base]} "
            f"{fmt_r(b / floor if b else None)} and the {NAMES[kind]} "
            f"{fmt_r(total / floor if total else None)}."
        )
    if b is not None and total is not None:
        text.append(f"The gap to the {NAMES[base]} is {fmt_delta(total - b)} per call.")
    if biggest is not None and total and biggest[2] > total:
        text.append(f"The {NAMES[kind]} measured faster than its own lower layers here, so the "
                    "differences between layers are within the noise of this run.")
    elif biggest is not None:
        desc = dict((lbl, d) for lbl, _, d in chain(kind))[biggest[0]]
        text.append(
            f"The largest layer is **{biggest[0]}** ({fmt_delta(biggest[2])}, "
            f"{biggest[3] * 100:.0f}% of the call): {LAYER_DESC[desc]}."
        )
    mem = res.mem(case, kind)
    if mem:
        text.append(f"Go allocations per call: {fmt_bytes(mem[0])} in {mem[1]:.0f} allocations "
                    f"({NAMES[base]}: {fmt_bytes((res.mem(case, base) or (None, 0))[0])}).")
    out.append(" ".join(text))
    out.append("")
    return out


WALK_SEARCH = ["search_literal", "search_regex", "find_go"]
WALK_TREE_MAX_RSS_KIB = 2 * 1024


def load_walk(d):
    """benches/walk.rs results: {case: {"desc", "wsfs": [ns], "rg": [ns], "results", "command",
    "entries", "rss_kib"}}, in file order."""
    out = {}
    f = os.path.join(d, "walk.jsonl")
    if not os.path.exists(f):
        return out
    for line in open(f, encoding="utf-8"):
        if not line.strip():
            continue
        r = json.loads(line)
        c = out.setdefault(r["case"], {"wsfs": [], "rg": []})
        if "ns" in r:
            c[r["path"]].append(r["ns"])
        for k in ("desc", "results", "command", "entries"):
            if k in r and r[k] is not None:
                c[k] = r[k]
        if "rss_growth_kib" in r:
            c["rss_kib"] = r["rss_growth_kib"]
    return out


def med(xs):
    return statistics.median(xs) if xs else None


def walk_targets(walk):
    rows = []
    for case in WALK_SEARCH:
        c = walk.get(case)
        if not c:
            continue
        a, b = med(c["wsfs"]), med(c["rg"])
        r = a / b if a and b else None
        rows.append({
            "label": f"{c.get('desc', case)}: wsfs vs `rg --sort path` ≤ 1.3×",
            "measured": "rg not installed" if b is None else
            f"{fmt_r(r)} ({fmt_t(a)} vs {fmt_t(b)}, {c.get('results')} results each)",
            "ok": None if r is None else r <= 1.3, "walk": True,
        })
    trees = sorted((c["entries"], name) for name, c in walk.items()
                   if name.startswith("tree_") and "entries" in c)
    if len(trees) >= 2:
        small, big = walk[trees[0][1]], walk[trees[-1][1]]
        ts, tb = med(small["wsfs"]), med(big["wsfs"])
        rows.append({
            "label": f"list_dir depth=50, 500 entries: {trees[-1][0]:,}-entry tree within 3× "
                     f"the {trees[0][0]:,}-entry tree's time",
            "measured": f"{fmt_t(tb)} vs {fmt_t(ts)}",
            "ok": None if ts is None or tb is None else tb <= 3 * ts, "walk": True,
        })
        k = big.get("rss_kib")
        rows.append({
            "label": f"list_dir depth=50, 500 entries, {trees[-1][0]:,}-entry tree: RSS growth "
                     f"< {fmt_kib(WALK_TREE_MAX_RSS_KIB)}",
            "measured": fmt_kib(k), "ok": None if k is None else k < WALK_TREE_MAX_RSS_KIB,
            "walk": True,
        })
    return rows


def walk_section(w, walk, machine):
    if not walk:
        return
    w("## Walking tools")
    w("")
    w(f"`benches/walk.rs`, through the library's `wsfs_call` path (`wsfs::api::call`: argument "
      f"parsing, the walk, the search, the text and the JSON envelope), on "
      f"`{machine.get('walk_src', '$(go env GOROOT)/src')}`, the page cache warm, against "
      f"ripgrep ({machine.get('rg', '?')}) run as a process with its output read through a "
      "pipe; samples alternate between the two. wsfs returns its results sorted by path, so the "
      "honest equivalent is `rg --sort path`, which makes ripgrep single-threaded (wsfs is "
      "single-threaded too); the other flags make rg apply exactly wsfs's filters (hidden files "
      "skipped, `.gitignore` files applied also outside git repositories, no global, parent or "
      "`.ignore` files). Both must return the same number of results (matching lines, or files), "
      "checked on every sample.")
    w("")
    rows = []
    for case in WALK_SEARCH:
        c = walk.get(case)
        if not c:
            continue
        a, b = med(c["wsfs"]), med(c["rg"])
        rows.append((c.get("desc", case), fmt_t(a), fmt_t(b),
                     fmt_r(a / b if a and b else None), c.get("results", "–"),
                     f"`{c['command']}`" if c.get("command") else "–"))
    if rows:
        w(table(["case", "wsfs", "rg", "wsfs / rg", "results", "rg command"], rows))
        w("")
    rows = []
    for name, c in walk.items():
        if name.startswith("tree_"):
            rows.append((f"{c.get('entries', '?'):,}" if isinstance(c.get("entries"), int) else "?",
                         fmt_t(med(c["wsfs"])), fmt_kib(c.get("rss_kib"))))
    if rows:
        w("`list_dir {depth: 50, max_entries: 500}` on trees of 100 directories holding "
          "directories of 100 files: the tree is filled breadth-first and stops at 500 entries, "
          "so at most 500 directories are read whatever the tree's size. Time per call (median) "
          "and peak RSS growth of one call in a fresh process after a warm-up listing:")
        w("")
        w(table(["entries in the tree", "time", "RSS growth"], rows))
        w("")


DELETE_MAX_RATIO = 1.5


def load_delete(d):
    """benches/delete.rs results: {case: {"desc", "files", "entries", "wsfs": [ns], "rm": [ns]}}."""
    out = {}
    f = os.path.join(d, "delete.jsonl")
    if not os.path.exists(f):
        return out
    for line in open(f, encoding="utf-8"):
        if not line.strip():
            continue
        r = json.loads(line)
        c = out.setdefault(r["case"], {"wsfs": [], "rm": []})
        c[r["path"]].append(r["ns"])
        for k in ("desc", "files", "entries"):
            c[k] = r[k]
    return out


def delete_targets(dele):
    rows = []
    for c in dele.values():
        a, b = med(c["wsfs"]), med(c["rm"])
        r = a / b if a and b else None
        rows.append({
            "label": f"{c['desc']}: `delete_file` vs `rm -rf` ≤ {DELETE_MAX_RATIO}×",
            "measured": f"{fmt_r(r)} ({fmt_t(a)} vs {fmt_t(b)})",
            # Explained in its own section, not by the per-layer breakdown.
            "ok": None if r is None else r <= DELETE_MAX_RATIO, "walk": True,
        })
    return rows


def delete_section(w, dele):
    if not dele:
        return
    w("## Recursive deletion")
    w("")
    w("`benches/delete.rs`: `delete_file {recursive: true}` through the library's `wsfs_call` "
      "path (`wsfs::api::call`: argument parsing, resolution beneath the root, the deletion "
      "walk by directory handles, the fsync of the parent directory, the text and the JSON "
      "envelope) against `rm -rf` run as a process (its start-up included; it does no fsync), "
      "each on its own copy of the same tree (100 directories of equally many 64-byte files), "
      "on the scratch file system (mostly waiting for the disk) and on a tmpfs (`/dev/shm`, "
      "where what is left is each one's own cost). "
      "Each sample builds both trees and flushes them to disk (`sync`) first; samples "
      "alternate which of the two deletes first. Every wsfs sample must report the whole tree "
      "deleted, every entry counted.")
    w("")
    rows = []
    for c in dele.values():
        a, b = med(c["wsfs"]), med(c["rm"])
        per = a / c["entries"] if a and c.get("entries") else None
        spread = "–" if not c["wsfs"] or not c["rm"] else (
            f"{fmt_t(min(c['wsfs']))}–{fmt_t(max(c['wsfs']))} / "
            f"{fmt_t(min(c['rm']))}–{fmt_t(max(c['rm']))}")
        rows.append((c["desc"], fmt_t(a), fmt_t(b), fmt_r(a / b if a and b else None),
                     fmt_t(per), spread, len(c["wsfs"])))
    w(table(["case", "delete_file", "rm -rf", "delete_file / rm", "delete_file per entry",
             "range (delete_file / rm)", "samples"], rows))
    w("")


def main():
    args = parse_args()
    samples, rss, patch, manifest, machine, files = load(args.dir)
    if not samples:
        sys.exit(f"report.py: no benchmark results in {args.dir}")
    res = Results(samples, rss, patch)
    cases = {c["name"]: c for c in manifest["cases"]}
    order = [c["name"] for c in manifest["cases"]]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    md = []
    w = md.append
    w("# wsfs performance")
    w("")
    w("<!-- Generated by bench/run.sh (bench/report.py) from measured results. Do not edit: "
      "run `make bench` to regenerate. -->")
    w("")
    if args.short:
        w("> **Short mode** (`bench/run.sh --short`): every benchmark ran once; the numbers "
          "below are single cold iterations, meaningless as timings.")
        w("")
    w(f"Generated {now} by `make bench`"
      + (f" in {args.elapsed / 60:.1f} minutes" if args.elapsed else "") + ".")
    w("")
    w(table(["machine", ""], [
        ("CPUs (nproc)", machine.get("nproc", "?")),
        ("CPU model", machine.get("cpu", "?")),
        ("kernel", machine.get("kernel", "?")),
        ("memory", machine.get("mem", "?")),
        ("Go", machine.get("go", "?")),
        ("Rust", machine.get("rustc", "?")),
        ("scratch filesystem", machine.get("scratch_fs", "?")),
        ("load average (1, 5, 15 min) at start / end",
         f"{machine.get('load_start', '?')} / {machine.get('load_end', '?')}"),
    ]))
    w("")
    try:
        busy = float(machine["load_start"].split()[0]) > 0.5 * float(machine["nproc"]) or \
            float(machine["load_end"].split()[0]) > 0.5 * float(machine["nproc"]) + 1
    except (KeyError, ValueError, IndexError):
        busy = False
    if busy:
        w("> Other processes were running during this run (see the load average), so the "
          "timings are noisier than on an idle machine.")
        w("")
    w(f"Every value is the median of {machine.get('reps', '?')} samples: the Go benchmarks "
      f"(`go test -bench -benchmem -benchtime={machine.get('benchtime', '?')}`) and the Rust "
      f"layer bench (~{machine.get('rust_sample_ms', '?')} ms per sample) run alternately "
      f"{machine.get('reps', '?')} times, each run giving one sample per benchmark, so every "
      "layer is measured under the same conditions over time. Ratios are ratios of medians. "
      "All paths run the same calls on the same files (`go/benchmarks/fixtures.go`); each timed "
      "run starts from the same file state, and every call's result is checked.")
    w("")
    w("What is measured (fastest to slowest layer):")
    w("")
    w("- **syscall floor**: only the system calls the contract needs (`go/benchmarks/floor.go`);")
    w("- **pure-Go baseline**: the same contract implemented on `os.Root` "
      "(`go/benchmarks/baseline.go`: atomic temp-file write with fsync, kept mode and "
      "directory fsync, `O_APPEND` + fdatasync, exact unique edit, bounded sorted listing, capped "
      "read with UTF-8/NUL check, flock like wsfs); `baseline_test.go` checks it returns what "
      "wsfs returns. **baseline as fantasy tool** wraps it with `fantasy.NewAgentTool`;")
    w("- **Rust core**: `wsfs::run_tool` on a `wsfs::Workspace` (`benches/layers.rs`);")
    w("- **C ABI**: `wsfs::ffi::wsfs_call_with_options` (or `wsfs_call_with_content`) + "
      "`wsfs_string_free` from Rust, called exactly as the typed Go API calls it ("
      + describe_modes(cases, "typed") + ") or as the fantasy tools call it (the model's JSON "
      "arguments; " + describe_modes(cases, "fantasy") + ");")
    w("- **cgo**: the same calls made from Go through cgo as `go/cgo.go` makes them, without "
      "the Go package's checks, context handling or decoding;")
    w("- **typed Go API**: `ws.ReadFile(ctx, wsfs.ReadFileInput{...})` etc.;")
    w("- **fantasy tool**: `wsfs.Tools(ws)` then `tool.Run(ctx, fantasy.ToolCall{Input: json})`.")
    w("")
    w("The Go context is cancellable in every path (as an agent run's is).")
    w("")

    walk = load_walk(args.dir)
    dele = load_delete(args.dir)
    targets = [] if args.short else evaluate(res, cases) + walk_targets(walk) + delete_targets(dele)
    if args.short:
        w("Targets and headline numbers are evaluated only by `make bench`.")
        w("")
    else:
        headline(w, res)
        write_targets(w, targets)
    main_tables(w, res, cases, order)
    walk_section(w, walk, machine)
    patch_table(w, res)
    delete_section(w, dele)
    missed = [r for r in targets if r["ok"] is False and not r.get("walk")]
    if missed:
        w("## Where targets are not met")
        w("")
        w("Per-layer breakdown of each missed target (cumulative median time of each layer of "
          "that path and what it adds), and what the floor is made of.")
        w("")
        for r in missed:
            for line in explain_miss(res, cases, r):
                w(line)
    reproducing(w, args, samples, rss, files)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    if args.short:
        print(f"report.py: wrote {args.out} (short mode: no targets evaluated)")
    else:
        met = sum(1 for r in targets if r["ok"])
        print(f"report.py: wrote {args.out} ({met}/{len(targets)} targets met)")


def headline(w, res):
    w("## Headline")
    w("")
    heads = []
    t1m = res.t(LIST_1M, "typed")
    if t1m is not None:
        heads.append(f"`list_dir` on a directory of 1,000,000 entries returns the first 500 in "
                     f"{fmt_t(t1m)} with {fmt_kib(res.rss_kib(LIST_1M, 'typed'))} of RSS growth "
                     f"(typed Go API; pure-Go baseline {fmt_t(res.t(LIST_1M, 'baseline'))}).")
    ts = res.t("read_sparse10g_text", "typed")
    if ts is not None:
        heads.append(f"`read_file` on a 10 GiB sparse file returns its first 256 KiB in "
                     f"{fmt_t(ts)} with {fmt_kib(res.rss_kib('read_sparse10g_text', 'typed'))} "
                     f"of RSS growth.")
    tr = res.t(RANGE_64M, "typed")
    if tr is not None:
        heads.append(f"`read_file` returns lines 500000-500100 of a 64 MiB file (streaming "
                     f"through it and counting all its lines) in {fmt_t(tr)} with "
                     f"{fmt_kib(res.rss_kib(RANGE_64M, 'typed'))} of RSS growth.")
    parts = []
    for case, label in (("append_100b", "append 100 B"), ("edit_1m", "edit 1 MiB"),
                        ("write_4k", "write 4 KiB"), ("read_4k", "read 4 KiB")):
        r = res.ratio(case, "typed", "baseline")
        if r is not None:
            parts.append(f"{label} {fmt_r(r)}")
    if parts:
        heads.append("Typed Go API vs a pure-Go `os.Root` implementation of the same contract: "
                     + ", ".join(parts) + ".")
    parts = []
    for case, label in (("append_100b", "append 100 B"), ("read_4k", "read 4 KiB"),
                        ("list_50", "list 50 entries")):
        r = res.ratio(case, "fantasy", "baseline_fantasy")
        if r is not None:
            parts.append(f"{label} {fmt_r(r)}")
    if parts:
        heads.append("fantasy agent tools vs the same baseline wrapped with "
                     "`fantasy.NewAgentTool`: " + ", ".join(parts) + ".")
    for h in heads:
        w(f"- {h}")
    w("")



def write_targets(w, targets):
    met = sum(1 for r in targets if r["ok"])
    missed = [r for r in targets if r["ok"] is False]
    w("## Targets")
    w("")
    w(f"{met} of {len(targets)} targets met"
      + (f", {len(missed)} not met (breakdown below)" if missed else "") + ".")
    w("")
    w(table(["target", "measured", "result"],
            [(r["label"], r["measured"], verdict(r["ok"], r.get("noise"))) for r in targets]))
    w("")



def main_tables(w, res, cases, order):
    w("## Every case, every path (median time per call)")
    w("")
    rows = []
    for case in order:
        rows.append((
            cases[case]["desc"],
            fmt_t(res.t(case, "floor")),
            fmt_t(res.t(case, "baseline")),
            fmt_t(res.t(case, "typed")),
            fmt_r(res.ratio(case, "typed", "baseline")),
            fmt_t(res.t(case, "baseline_fantasy")),
            fmt_t(res.t(case, "fantasy")),
            fmt_r(res.ratio(case, "fantasy", "baseline_fantasy")),
            fmt_spread(max((s for s in (res.spread(case, p) for p in
                            ("baseline", "typed", "baseline_fantasy", "fantasy")) if s is not None),
                           default=None)),
        ))
    w(table(["case", "floor", "baseline", "typed Go API", "typed / baseline",
             "baseline fantasy", "fantasy", "fantasy / baseline fantasy", "spread"], rows))
    w("")
    w("*spread*: the largest half-range of the samples of the four compared paths, relative "
      "to their median; ratios closer to 1 than that are within the run-to-run noise "
      "(fsync-bound cases vary most).")
    w("")

    # Layers.
    w("## Cost of each layer")
    w("")
    w("Median time per call of each layer, and in parentheses what the layer adds to the one "
      "below it. The typed Go API and the fantasy tools call the C ABI differently (output "
      "mode, content buffer), so the two stacks are shown separately. Rust and Go layers run "
      "in different processes, so small differences between them are noise.")
    w("")
    rows = []
    for case in order:
        def cell(path, below):
            t = res.t(case, path)
            tb = res.t(case, below) if below else None
            if t is None:
                return "–"
            return fmt_t(t) + ("" if tb is None else f" ({fmt_delta(t - tb)})")
        rows.append((
            case, fmt_t(res.t(case, "floor")),
            cell("core", "floor"),
            cell("cabi_typed", "core"), cell("cgo_typed", "cabi_typed"), cell("typed", "cgo_typed"),
            cell("cabi_fantasy", "core"), cell("cgo_fantasy", "cabi_fantasy"),
            cell("fantasy", "cgo_fantasy"),
        ))
    w(table(["case", "floor", "Rust core", "C ABI (typed)", "cgo (typed)", "typed Go API",
             "C ABI (fantasy)", "cgo (fantasy)", "fantasy tool"], rows))
    w("")
    w("Distance from the floor (time / floor time):")
    w("")
    rows = []
    for case in order:
        f = res.t(case, "floor")
        rows.append([case, fmt_t(f)] + [
            fmt_r(res.t(case, p) / f if f and res.t(case, p) is not None else None)
            for p in ("core", "baseline", "typed", "baseline_fantasy", "fantasy")])
    w(table(["case", "floor", "Rust core", "baseline", "typed Go API", "baseline fantasy",
             "fantasy"], rows))
    w("")

    # Memory.
    w("## Memory")
    w("")
    w("Peak RSS growth of one call, each measured in a fresh process after a warm-up call of "
      "the same tool on a small input (`/proc/self/clear_refs` = 5 resets `VmHWM`; growth = "
      "`VmHWM` after the call − `VmRSS` before it). Memory the warm-up already mapped is "
      "reused, so this is what the call itself adds.")
    w("")
    rss_paths = ("floor", "baseline", "baseline_fantasy", "core", "cabi_typed", "typed", "fantasy")
    w(table(["case"] + [NAMES[p] for p in rss_paths],
            [[case] + [fmt_kib(res.rss_kib(case, p)) for p in rss_paths] for case in order]))
    w("")
    w("Heap allocated per call (bytes and allocations; Go: `-benchmem`, Rust: a counting "
      "global allocator, which also sees the C ABI's strings):")
    w("")
    mem_paths = ("baseline", "baseline_fantasy", "core", "cabi_typed", "cgo_typed", "typed",
                 "fantasy")
    rows = []
    for case in order:
        row = [case]
        for p in mem_paths:
            m = res.mem(case, p)
            row.append("–" if m is None else f"{fmt_bytes(m[0])} / {m[1]:.0f}")
        rows.append(row)
    w(table(["case"] + [NAMES[p] for p in mem_paths], rows))
    w("")
    w("The cgo and Go rows count only Go's heap; the Rust library's allocations in the same "
      "calls are in the Rust rows.")
    w("")
    rows = []
    for kind in ("typed", "fantasy"):
        bg, cc = res.t("read_4k", f"ctx:{kind}_background"), res.t("read_4k", f"ctx:{kind}_cancellable")
        if bg is not None and cc is not None:
            rows.append((NAMES[kind], fmt_t(bg), fmt_t(cc), fmt_delta(cc - bg)))
    if rows:
        w("## Cost of a cancellable context")
        w("")
        w("With a context that can be cancelled, every call also creates, watches "
          "(`context.AfterFunc`) and frees a cancel token; with `context.Background()` it does "
          "not. read_4k, median per call (`BenchmarkContext`):")
        w("")
        w(table(["path", "context.Background()", "cancellable context", "difference"], rows))
        w("")



def patch_table(w, res):
    pairs = res.patch_cases()
    if not pairs:
        return
    w("## apply_patch vs git apply")
    w("")
    w("`benches/patch.rs`: a unified diff applied by `wsfs::run_tool` (Rust core), through the C "
      "ABI (`wsfs_call`, the whole envelope with the returned diff), and by `git apply` started "
      "as a process per call, as an agent's shell tool would. Calls alternate the patch and its "
      "reverse, so each does the same work. `git apply` never fsyncs; apply_patch fsyncs the new "
      "file and its directory, and a multi-file patch also its journal and each directory again "
      "around the commit: on tmpfs fsync costs nothing, so the tmpfs rows compare the work itself, "
      "and the disk rows add what durability costs on this machine's disk. Median per call.")
    w("")
    rows = []
    for case, fs in pairs:
        core, cabi, git = (res.patch_t(case, fs, p) for p in ("core", "cabi", "git_apply"))
        rows.append((res.patch.get(("desc", case), case), fs_name(fs), fmt_t(core), fmt_t(cabi),
                     fmt_t(git), fmt_r(ratio_of(cabi, git))))
    w(table(["patch", "filesystem", "Rust core", "C ABI", "git apply", "C ABI / git apply"], rows))
    w("")


def reproducing(w, args, samples, rss, files):
    w("## Reproducing")
    w("")
    w("`make bench` (about "
      + (f"{args.elapsed / 60:.0f}" if args.elapsed else "?")
      + " minutes here) rebuilds this file; `make bench-short` runs every benchmark once "
      "without timing anything. Raw results: `target/bench/full/`. Single paths: "
      "`cd go && go test -run '^$' -bench 'Tools/read_4k' -benchmem ./benchmarks` (small "
      "fixture in a temporary directory).")
    w("")
    w(f"Inputs: {len(files)} Go result files, "
      f"{sum(len(v) for k, v in samples.items() if k[1] in ('core', 'cabi_typed', 'cabi_fantasy'))} "
      f"Rust samples, {len(rss)} RSS measurements.")
    w("")


if __name__ == "__main__":
    main()
