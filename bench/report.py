#!/usr/bin/env python3
"""Generates docs/PERFORMANCE.md from the raw results of bench/run.sh.

Usage: bench/report.py --dir target/bench/full --out docs/PERFORMANCE.md [--short] [--elapsed S]

Reads (all written by bench/run.sh into --dir):
  manifest.json         the benchmark cases (from go/internal/benchmarks' fixture)
  machine.json          nproc, CPU, kernel, tool versions, filesystems, load, disk busy-ness
  paired.jsonl          go/internal/benchmarks TestPaired: per-pair times of each comparison, per case
  rust.jsonl            benches/layers.rs samples
  rss-go.jsonl, rss-rust.jsonl   peak RSS growth of one call, per case and path
  walk.jsonl            benches/walk.rs: the walking tools vs ripgrep, list_dir trees
  python.jsonl          bench/python_read.py: read_file through ctypes vs plain Python
  decode.jsonl          go TestDecodeBench: envelope decoders compared
  patch.jsonl           benches/patch.rs samples: apply_patch vs git apply, per filesystem
  delete.jsonl          benches/delete.rs: recursive delete_file vs rm -rf
  overlay.jsonl         benches/overlay.rs: the overlay session store
  overlay_view.jsonl    benches/overlay_view.rs: overlay mode's reads vs host mode
  wasm.jsonl            benches/wasm.rs: Wasm tools through wsfs_call (wasmi)
  ../wasm-wasmtime.jsonl  the same on both engines (make bench-wasmtime), optional
  devtools.jsonl        benches/devtools.rs: the runner, workspace_info's cache, git_status
  ../build.json         bench/build_sizes.py (make bench-build): library sizes and build, optional

Every number in the output is computed here from those files. The document is a list of
sections (SECTIONS, near the end): each is a function of the loaded results returning its
lines, and each may add targets (TARGETS). A new benchmark adds its loader, a section and its
targets there. Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import statistics
import sys

# The paths, in the order of the wsfs stack, with the names the tables use.
NAMES = {
    "floor": "syscall floor",
    "baseline": "pure-Go baseline",
    "baseline_aa": "baseline again (A/A)",
    "baseline_fantasy": "baseline as fantasy tool",
    "baseline_open_first": "baseline that opens before looking",
    "core": "Rust core",
    "cabi_typed": "C ABI, typed API's call",
    "cabi_fantasy": "C ABI, fantasy's call",
    "cgo_typed": "cgo, typed API's call",
    "cgo_fantasy": "cgo, fantasy's call",
    "typed": "typed Go API",
    "typed_bg": "typed Go API, context.Background()",
    "fantasy": "fantasy tool",
    "fantasy_bg": "fantasy tool, context.Background()",
}

FLOOR_DESC = {
    "read_file": "openat, fstat, read of at most max_read_bytes + 1 bytes, close (for a "
    "range of lines: 64 KiB reads to the end of the file, newlines counted, the range copied "
    "out; for a path starting with `..`: no system call)",
    "write_file": "openat + flock + fstat of the existing file, openat(O_TMPFILE), write, "
    "fchown, fchmod, fsync, linkat under a temp name, close, renameat, openat + fsync + close "
    "of the directory",
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
    "go": "the Go package: UTF-8/NUL checks, building the argument JSON, the context's cancel "
    "token, decoding the envelope into the result",
    "fantasy": "fantasy decoding the call's JSON into the input struct, the Go package's "
    "context handling and envelope decoding, the `ToolResponse`",
}

TYPED = ("typed", "baseline")
FANTASY = ("fantasy", "baseline_fantasy")
AA = ("baseline_aa", "baseline")
CTX = [("typed", "typed_bg"), ("fantasy", "fantasy_bg")]
# A reference, not a target: the typed API against a baseline whose read_file opens the path
# before looking at the leaf (go/internal/benchmarks OpenFirstComparisons), on the whole-file reads.
OPEN_FIRST = ("typed", "baseline_open_first")
OPEN_FIRST_CASES = [("read_4k", "read 4 KiB"), ("read_1m_capped", "read 256 KiB of a 1 MiB file")]

RANGE_64M = "read_range_64m"
CTX_PROBE = "ctx_probe"
LIST_1M = "list_1m"
SPARSE = [("read_sparse10g_text", "text head"), ("read_sparse10g_zeros", "all zeros")]
PATCH_TARGET = "patch_100_hunks_10k_lines"
# A sort key of list_dir's bounded heap: the name's bytes plus a Vec header.
SORT_KEY_OVERHEAD = 24
# A pair ratio whose quartiles lie further than this from its median is too noisy to judge.
NOISY_IQR = 0.25


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--short", action="store_true")
    p.add_argument("--elapsed", type=float, default=None)
    return p.parse_args()


def jsonl(path):
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]


def quantile(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


class Results:
    """Everything measured: the paired Go runs, the Rust layer samples, RSS, and the rest."""

    def __init__(self, d):
        self.dir = d
        self.manifest = json.load(open(os.path.join(d, "manifest.json"), encoding="utf-8"))
        self.cases = {c["name"]: c for c in self.manifest["cases"]}
        # Probes measure one thing (the context's cost) and are not cases of the tables.
        self.order = [c["name"] for c in self.manifest["cases"] if not c.get("probe")]
        mf = os.path.join(d, "machine.json")
        self.machine = json.load(open(mf, encoding="utf-8")) if os.path.exists(mf) else {}
        self.pairs = {}    # (case, "a/b") -> [(a_ns, b_ns, rep)]
        self.singles = {}  # (case, path) -> [ns]
        self.fsync = {}    # case -> [ns]
        self.mem = {}      # (case, path) -> (bytes, allocs)
        self.loads = {}    # case -> [load string per rep]
        self.rounds = {}   # case -> rounds in all
        for r in jsonl(os.path.join(d, "paired.jsonl")):
            c = r["case"]
            for name, ps in r["pairs"].items():
                self.pairs.setdefault((c, name), []).extend((a, b, r["rep"]) for a, b in ps)
            for path, ns in r["singles"].items():
                self.singles.setdefault((c, path), []).extend(ns)
            self.fsync.setdefault(c, []).extend(r.get("fsync_ns") or [])
            for path, m in (r.get("mem") or {}).items():
                self.mem[(c, path)] = tuple(m)
            self.loads.setdefault(c, []).append(r.get("load", "?"))
            self.rounds[c] = self.rounds.get(c, 0) + r["rounds"]
        self.rust = {}  # (case, layer) -> [(ns, bytes, allocs)]
        for r in jsonl(os.path.join(d, "rust.jsonl")):
            self.rust.setdefault((r["case"], r["layer"]), []).append(
                (r["ns_per_op"], r["bytes_per_op"], r["allocs_per_op"]))
        self.rss = {}
        for name in ("rss-go.jsonl", "rss-rust.jsonl"):
            for r in jsonl(os.path.join(d, name)):
                self.rss[(r["case"], r["path"])] = r

    def samples(self, case, path):
        """Every time measured for a Go path (from all its pairs and rounds), or Rust samples."""
        out = list(self.singles.get((case, path), []))
        for (c, name), ps in self.pairs.items():
            if c != case:
                continue
            a, b = name.split("/")
            out += [x[0] for x in ps if a == path] + [x[1] for x in ps if b == path]
        if not out and (case, path) in self.rust:
            out = [x[0] for x in self.rust[(case, path)]]
        return out

    def t(self, case, path):
        s = self.samples(case, path)
        return statistics.median(s) if s else None

    def ratio(self, case, a, b):
        """(median, p25, p75, per-rep medians, n) of the per-pair ratios a/b, or None."""
        ps = self.pairs.get((case, f"{a}/{b}"))
        if not ps:
            return None
        rs = [x[0] / x[1] for x in ps if x[1] > 0]
        reps = sorted({x[2] for x in ps})
        per_rep = [statistics.median(x[0] / x[1] for x in ps if x[2] == rep and x[1] > 0)
                   for rep in reps]
        return (statistics.median(rs), quantile(rs, 0.25), quantile(rs, 0.75), per_rep, len(rs))

    def diff(self, case, a, b):
        """(median, p25, p75, n) of the per-pair differences a - b (ns), or None."""
        ps = self.pairs.get((case, f"{a}/{b}"))
        if not ps:
            return None
        ds = [x[0] - x[1] for x in ps]
        return statistics.median(ds), quantile(ds, 0.25), quantile(ds, 0.75), len(ds)

    def mem_of(self, case, path):
        if (case, path) in self.mem:
            return self.mem[(case, path)]
        s = self.rust.get((case, path))
        if s:
            return statistics.median(x[1] for x in s), statistics.median(x[2] for x in s)
        return None

    def rss_kib(self, case, path):
        r = self.rss.get((case, path))
        return None if r is None or r.get("error") else r["growth_kib"]

    def fsync_share(self, case):
        f, t = self.fsync.get(case), self.t(case, "floor")
        if not f or not t:
            return None
        return statistics.median(f), statistics.median(f) / t

    def disk_busy(self):
        try:
            return int(self.machine.get("disk_busy"))
        except (TypeError, ValueError):
            return None

    def busy_cpu(self):
        try:
            n = float(self.machine["nproc"])
            return max(float(self.machine["load_start"].split()[0]),
                       float(self.machine["load_end"].split()[0])) > 0.5 * n
        except (KeyError, ValueError, IndexError):
            return False


def fmt_t(ns):
    if ns is None:
        return "–"
    if abs(ns) < 1e3:
        return f"{ns:.0f} ns"
    if abs(ns) < 1e6:
        return f"{ns / 1e3:.1f} µs" if abs(ns) < 1e5 else f"{ns / 1e3:.0f} µs"
    if abs(ns) < 1e9:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_delta(ns):
    if ns is None:
        return "–"
    return ("+" if ns >= 0 else "−") + fmt_t(abs(ns))


def fmt_r(r):
    return "–" if r is None else f"{r:.2f}×"


def commit_spread(r):
    """The overlay commit's per-pair ratios (newer runs record them): ' (each pair 1.05–1.52×)'."""
    each = r.get("ratios")
    if not each:
        return ""
    return f" (each pair {min(each):.2f}–{max(each):.2f}×)"


def fmt_ratio(r):
    """A pair ratio with its quartiles: 0.93× (0.88–0.99)."""
    if r is None:
        return "–"
    return f"{r[0]:.2f}× ({r[1]:.2f}–{r[2]:.2f})"


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


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def noisy(r):
    return r is not None and (r[2] - r[1]) / 2 > NOISY_IQR * r[0]


def fsync_bound(res, case):
    c = res.cases.get(case, {})
    return c.get("tool") in ("write_file", "append_file", "edit_file") and c.get("fs") != "tmpfs"


def case_load(res, case):
    loads = res.loads.get(case)
    return ", ".join(l.split()[0] for l in loads) if loads else "?"


# ---------------------------------------------------------------------------------------------
# Targets. Each function returns rows: {"label", "measured", "ok" (True, False or None: not
# measured), "why" (when not judged), "case", "chain"}.

def ratio_measured(res, case, pair, r):
    """A pair ratio r = res.ratio(case, *pair) with both sides' times and the per-run medians."""
    return (f"{fmt_ratio(r)}; {fmt_t(res.t(case, pair[0]))} vs {fmt_t(res.t(case, pair[1]))} "
            f"(median of {r[4]} pairs; runs: " + ", ".join(f"{x:.2f}×" for x in r[3]) + ")")


def ratio_target(res, case, label, pair, limit, judge_fsync=False):
    r = res.ratio(case, *pair)
    what = "typed Go API vs pure-Go baseline" if pair == TYPED else \
        "fantasy tool vs baseline as fantasy tool"
    row = {"label": f"{label}: {what} ≤ {limit:g}×", "case": case,
           "chain": "typed" if pair == TYPED else "fantasy"}
    if r is None:
        return dict(row, measured="–", ok=None)
    row["measured"] = ratio_measured(res, case, pair, r)
    busy = res.disk_busy()
    if fsync_bound(res, case) and not judge_fsync and (noisy(r) or (busy or 0) >= 5):
        return dict(row, ok=None, why="fsync-bound on a shared disk"
                    + (f" ({busy}% busy before the run)" if busy is not None else "")
                    + ": the ratio means little; see the tmpfs case")
    return dict(row, ok=r[0] <= limit)


def issue9_targets(ctx):
    res = ctx["res"]
    rows = []
    for case, label, limit in [("read_4k", "read 4 KiB", 1.0),
                               ("read_1m_capped", "read 256 KiB of a 1 MiB file", 1.0),
                               ("refuse_outside", "refuse `../outside.txt`", 2.0)]:
        rows.append(ratio_target(res, case, label, TYPED, limit))
    for case in res.order:
        c = res.cases[case]
        if c.get("fs") == "tmpfs":
            rows.append(ratio_target(res, case, c["desc"], TYPED, 1.0))
    for case in res.order:
        if res.cases[case]["tool"] == "list_dir":
            rows.append(ratio_target(res, case, res.cases[case]["desc"] + " (keeps its lead)",
                                     TYPED, 1.0))
    for case in res.order:
        rows.append(ratio_target(res, case, res.cases[case]["desc"], FANTASY, 1.1))
    for a, b in CTX:
        d = res.diff(CTX_PROBE, a, b)
        rows.append({
            "label": f"a cancellable context costs the {NAMES[a]} < 0.5 µs per call (measured "
                     "alone)",
            "measured": "–" if d is None else
            f"{fmt_delta(d[0])} (quartiles {fmt_delta(d[1])} to {fmt_delta(d[2])}, {d[3]} pairs "
            f"of `{CTX_PROBE}`)",
            "ok": None if d is None else d[0] < 500, "case": CTX_PROBE, "chain": a})
    return rows


def scale_targets(ctx):
    res = ctx["res"]
    rows = []
    c1m = res.cases.get(LIST_1M)
    sort_keys_kib = None
    if c1m:
        # The names of the 500 kept entries ("entry-0000000.txt") plus a Vec header each.
        sort_keys_kib = c1m["expect_entries"] * (len("entry-0000000.txt") + SORT_KEY_OVERHEAD) / 1024
    for kind in ("typed", "fantasy"):
        t = res.t(LIST_1M, kind)
        rows.append({"label": f"list_dir, 1M entries ({NAMES[kind]}): < 1 s",
                     "measured": fmt_t(t), "ok": None if t is None else t < 1e9,
                     "case": LIST_1M, "chain": kind})
    for kind in ("typed", "fantasy"):
        k = res.rss_kib(LIST_1M, kind)
        beyond = None if k is None else k - (sort_keys_kib or 0)
        rows.append({"label": f"list_dir, 1M entries ({NAMES[kind]}): RSS growth < 8 MiB beyond "
                              "the sort keys",
                     "measured": "–" if k is None else
                     f"{fmt_kib(k)} (sort keys {fmt_kib(sort_keys_kib)})",
                     "ok": None if beyond is None else beyond < 8 * 1024,
                     "case": LIST_1M, "chain": kind, "rss": True})
    for case, what in SPARSE:
        for kind in ("typed", "fantasy"):
            t = res.t(case, kind)
            rows.append({"label": f"read_file, 10 GiB sparse file, {what} ({NAMES[kind]}): < 5 ms",
                         "measured": fmt_t(t), "ok": None if t is None else t < 5e6,
                         "case": case, "chain": kind})
        for kind in ("typed", "fantasy"):
            k = res.rss_kib(case, kind)
            rows.append({"label": f"read_file, 10 GiB sparse file, {what} ({NAMES[kind]}): RSS "
                                  "growth < 2 MiB",
                         "measured": fmt_kib(k), "ok": None if k is None else k < 2 * 1024,
                         "case": case, "chain": kind, "rss": True})
    # The time of this case is reported (headline, tables), not held to a target.
    for kind in ("typed", "fantasy"):
        k = res.rss_kib(RANGE_64M, kind)
        rows.append({"label": f"read_file, lines 500000-500100 of a 64 MiB file ({NAMES[kind]}): "
                              "RSS growth < 2 MiB",
                     "measured": fmt_kib(k), "ok": None if k is None else k < 2 * 1024,
                     "case": RANGE_64M, "chain": kind, "rss": True})
    return rows


def verdict(row):
    if row["ok"] is None:
        return f"not judged: {row['why']}" if row.get("why") else "not measured"
    return "met" if row["ok"] else "**not met**"


# ---------------------------------------------------------------------------------------------
# Sections. Each takes the context dict and returns its lines.

def header_section(ctx):
    res, args, m = ctx["res"], ctx["args"], ctx["res"].machine
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = ["# wsfs performance", "",
           "<!-- Generated by bench/run.sh (bench/report.py) from measured results. Do not edit: "
           "run `make bench` to regenerate. -->", ""]
    if args.short:
        out += ["> **Short mode** (`bench/run.sh --short`): every benchmark ran once; the numbers "
                "below are single cold iterations, meaningless as timings.", ""]
    out += [f"Generated {now} by `make bench`"
            + (f" in {args.elapsed / 60:.1f} minutes" if args.elapsed else "") + ".", ""]
    busy = res.disk_busy()
    out += [table(["machine", ""], [
        ("CPUs (nproc)", m.get("nproc", "?")),
        ("CPU model", m.get("cpu", "?")),
        ("kernel", m.get("kernel", "?")),
        ("memory", m.get("mem", "?")),
        ("Go", m.get("go", "?")),
        ("Rust", m.get("rustc", "?")),
        ("scratch filesystem (the disk cases)", m.get("scratch_fs", "?")),
        ("tmpfs cases", "on /dev/shm (tmpfs)" if m.get("tmpfs") else "none (no tmpfs)"),
        ("load average (1, 5, 15 min) at start / end",
         f"{m.get('load_start', '?')} / {m.get('load_end', '?')}"),
        ("scratch disk busy with other I/O before the run",
         "?" if busy is None else f"{busy}% of 3 s"),
    ]), ""]
    if res.busy_cpu():
        out += ["> **A busy machine.** Other processes were running (see the load average, and "
                "the load column of the tables, taken when each case started): timings are "
                "slower and noisier than on an idle machine. The ratios are of paired calls, so "
                "they suffer much less than the times themselves; the A/A column shows how much.",
                ""]
    return out


def method_section(ctx):
    res = ctx["res"]
    m = res.machine
    return [
        "## How it is measured", "",
        "Each comparison is measured **paired** (`go/internal/benchmarks/paired.go`): one call of each "
        "side, back to back, alternating which side goes first, and each pair gives one ratio. "
        "A round makes one pair of every comparison of a case (typed Go API vs baseline, "
        "fantasy tool vs baseline as fantasy tool, baseline vs baseline) and one call of the "
        "floor and of the cgo layers, in a rotating order, after a warm-up round. Rounds go on "
        f"for {m.get('paired_ms', '?')} ms per case (at least 5), in {m.get('reps', '?')} runs "
        "that alternate with the Rust layer bench. Ratios are **medians of per-pair ratios**, "
        "with their quartiles (p25–p75) as the spread and the median of each run after them; "
        "times are medians of every call of the path. The **A/A control** pairs the baseline "
        "with itself: its ratio should be 1.00×, and its spread is what noise alone does to a "
        "ratio on this machine at this time.",
        "",
        "What is measured (fastest to slowest layer):", "",
        "- **syscall floor**: only the system calls the contract needs, with preallocated "
        "buffers and no checks (`go/internal/benchmarks/floor.go`);",
        "- **pure-Go baseline**: the leanest correct implementation of the same contract on "
        "`os.Root` we know how to write (`go/internal/benchmarks/baseline*.go`: one copy of a read's "
        "content, SHA-256 of a whole file, `O_TMPFILE` atomic writes with fsync, kept mode and "
        "directory fsync, `O_APPEND` + fdatasync, exact unique edit, bounded sorted listing, "
        "flock like wsfs, wsfs's default policy (no change under `.git`) checked lexically, "
        "and like wsfs a look at the leaf before opening it, so special files "
        "are refused unopened); `TestBenchCasesMatch` checks that it returns exactly what wsfs "
        "returns (data and text) for every case below, and `TestSpecialFilesAreNotOpened` that "
        "neither side opens a FIFO. **baseline as fantasy tool** wraps it with "
        "`fantasy.NewAgentTool`" + (
            ". A variant whose read_file opens before looking (fewer system calls, and special "
            "files opened) is paired with the typed Go API on the whole-file reads for "
            "reference only (below the targets)" if any(
                res.ratio(case, *OPEN_FIRST) for case, _ in OPEN_FIRST_CASES) else "") + ";",
        "- **Rust core**: `wsfs::run_tool` on a `wsfs::Workspace` (`benches/layers.rs`);",
        "- **C ABI**: `wsfs_call_with_options` (or `wsfs_call_with_content`) + `wsfs_string_free` "
        "from Rust, called exactly as the typed Go API calls it (read_file: `\"data_raw\"`; "
        "write_file, append_file: the content as a buffer; others `\"full\"`) or as the fantasy "
        "tools call it (the model's JSON arguments, `\"text_raw\"`);",
        "- **cgo**: the same calls made from Go through cgo as `go/cgo.go` makes them, without "
        "the Go package's checks, context handling or decoding;",
        "- **typed Go API**: `ws.ReadFile(ctx, wsfs.ReadFileInput{...})` etc.;",
        "- **fantasy tool**: `wsfs.Tools(ws)` then `tool.Run(ctx, fantasy.ToolCall{Input: json})`.",
        "",
        "Every path gets the same cancellable context (as an agent run's is), works on its own "
        "copy of the case's files, and every call's result is checked. The write, append and "
        "edit cases run twice: on the scratch disk (" + str(m.get("scratch_fs", "?")) + "), "
        "where fsync dominates and the disk is shared with other processes, and on **tmpfs**, "
        "where fsync costs nothing and the CPU cost of each layer shows. The targets for those "
        "tools are judged on tmpfs.",
        "",
    ]


def headline_section(ctx):
    res = ctx["res"]
    out = ["## Headline", ""]
    heads = []
    parts = []
    for case, label in (("read_4k", "read 4 KiB"), ("read_1m_capped", "read 256 KiB"),
                        ("refuse_outside", "refuse `../x`"), ("write_4k_tmpfs", "write 4 KiB"),
                        ("append_100b_tmpfs", "append 100 B"), ("edit_1m_tmpfs", "edit 1 MiB"),
                        ("list_50", "list 50 entries")):
        r = res.ratio(case, *TYPED)
        if r is not None:
            parts.append(f"{label} {r[0]:.2f}×")
    if parts:
        heads.append("Typed Go API vs a lean pure-Go `os.Root` implementation of the same "
                     "contract (median of per-pair ratios; writes on tmpfs): "
                     + ", ".join(parts) + ".")
    parts = []
    for case, label in (("read_4k", "read 4 KiB"), ("write_1m_tmpfs", "write 1 MiB"),
                        ("list_50", "list 50 entries")):
        r = res.ratio(case, *FANTASY)
        if r is not None:
            parts.append(f"{label} {r[0]:.2f}×")
    if parts:
        heads.append("fantasy agent tools vs the same baseline wrapped with "
                     "`fantasy.NewAgentTool`: " + ", ".join(parts) + ".")
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
    for h in heads + ctx.get("headlines", []):
        out.append(f"- {h}")
    out.append("")
    return out


def targets_section(ctx):
    targets = ctx["targets"]
    met = sum(1 for r in targets if r["ok"])
    missed = [r for r in targets if r["ok"] is False]
    unjudged = [r for r in targets if r["ok"] is None]
    out = ["## Targets", "",
           f"{met} of {len(targets)} targets met"
           + (f", {len(missed)} not met" if missed else "")
           + (f", {len(unjudged)} not judged or not measured" if unjudged else "")
           + (" (breakdown of each miss below)" if missed else "") + ".", "",
           table(["target", "measured", "result"],
                 [(r["label"], r["measured"], verdict(r)) for r in targets]), ""]
    return out + open_first_lines(ctx["res"])


def open_first_lines(res):
    """The read targets' reference rows: the typed API against a baseline that opens first.
    Not targets: that baseline does less than the contract. Empty for runs without them."""
    rows = []
    for case, label in OPEN_FIRST_CASES:
        r = res.ratio(case, *OPEN_FIRST)
        if r is None:
            continue
        allocs = [res.mem_of(case, p) for p in ("baseline", OPEN_FIRST[1])]
        rows.append((f"{label}: typed Go API vs a baseline that opens before looking (does not "
                     "keep the special-file contract)", ratio_measured(res, case, OPEN_FIRST, r),
                     " / ".join("–" if m is None else f"{m[1]:.0f}" for m in allocs)))
    if not rows:
        return []
    return ["**Reference, not a target.** The read targets above compare with a baseline that, "
            "like wsfs, looks at the leaf before opening it. A baseline that opens the path first "
            "and then checks the open file (`OpenBaselineOpenFirst` in "
            "`go/internal/benchmarks/baseline.go`, what the baseline did before it kept this part of the "
            "contract) skips the leaf's `lstat` in its directory "
            "(`newfstatat(AT_SYMLINK_NOFOLLOW)`), and with it the `os.Root` the baseline makes "
            "of that directory (`os.Root.OpenRoot`: an `fstat` to check it is one, and a few "
            "allocations): two system calls fewer per read of these files, which are in a "
            "subdirectory. It does not keep the contract that special files are refused without "
            "being opened: opening a FIFO wakes a writer waiting for a reader, opening a device "
            "calls its driver (`TestOpenFirstOpensSpecialFiles`). Otherwise it returns what wsfs "
            "returns (`TestBenchCasesMatch`).", "",
            table(["reference (not a target)", "measured",
                   "Go allocations per call: baseline / opens first"], rows), ""]


def cases_section(ctx):
    res = ctx["res"]
    out = ["## Every case", "",
           "Median time per call of each path, and the medians of the per-pair ratios with "
           "their quartiles. *load*: the 1-minute load average when the case started, per run.",
           ""]
    rows = []
    for case in res.order:
        c = res.cases[case]
        fs = "tmpfs" if c.get("fs") == "tmpfs" else res.machine.get("scratch_fs", "disk")
        typed = res.ratio(case, *TYPED)
        note = ""
        if fsync_bound(res, case):
            note = " ¹"
        rows.append((
            c["desc"], fs, fmt_t(res.t(case, "floor")), fmt_t(res.t(case, "baseline")),
            fmt_t(res.t(case, "typed")), fmt_ratio(typed) + note,
            fmt_ratio(res.ratio(case, *AA)),
            fmt_t(res.t(case, "baseline_fantasy")), fmt_t(res.t(case, "fantasy")),
            fmt_ratio(res.ratio(case, *FANTASY)) + note, case_load(res, case)))
    out += [table(["case", "fs", "floor", "baseline", "typed Go API", "typed / baseline",
                   "A/A", "baseline fantasy", "fantasy", "fantasy / baseline fantasy", "load"],
                  rows), ""]
    busy = res.disk_busy()
    out += ["¹ fsync-bound on the scratch disk, which other processes share"
            + (f" ({busy}% busy with their I/O before the run)" if busy is not None else "")
            + ": these times are mostly the disk's, and their ratios mean little when the A/A "
            "spread is wide. The same calls on tmpfs show what the layers cost.", ""]
    return out


def writes_section(ctx):
    res = ctx["res"]
    rows = []
    for case in res.order:
        c = res.cases[case]
        if c["tool"] not in ("write_file", "append_file", "edit_file"):
            continue
        fs = res.fsync_share(case)
        typed = res.t(case, "typed")
        rows.append((c["desc"], fmt_t(res.t(case, "floor")),
                     "–" if fs is None else fmt_t(fs[0]),
                     "–" if fs is None else f"{fs[1] * 100:.0f}%",
                     "–" if fs is None or not typed else f"{fs[0] / typed * 100:.0f}%"))
    if not rows:
        return []
    return ["## Writes: what fsync costs", "",
            "Time the floor spends in `fsync`/`fdatasync` (median per call), as a share of the "
            "floor and of the typed Go API's call. Every implementation makes the same syncs, so "
            "this part of each call is the disk's, whatever the code.", "",
            table(["case", "floor", "fsync", "share of the floor", "share of the typed call"],
                  rows), ""]


def context_section(ctx):
    res = ctx["res"]
    rows = []
    for case in (CTX_PROBE, "read_4k"):
        for a, b in CTX:
            d = res.diff(case, a, b)
            if d is not None:
                rows.append((f"`{case}`", NAMES[a], fmt_t(res.t(case, b)), fmt_t(res.t(case, a)),
                             fmt_delta(d[0]), f"{fmt_delta(d[1])} to {fmt_delta(d[2])}", d[3]))
    if not rows:
        return []
    return ["## Cost of a cancellable context", "",
            "The same call with `context.Background()` and with a cancellable context, paired; "
            "the cost is the median of the per-pair differences. A cancellable context makes "
            "the library stop at its next check when it is cancelled: it needs a cancel token "
            "for the context, which the Go package keeps for the context's life (one lookup per "
            "call) and passes in the call's options. "
            f"`{CTX_PROBE}` measures that alone: {res.cases.get(CTX_PROBE, {}).get('desc', '')}, "
            "a call the library refuses after reading its options and arguments, so nothing but "
            "the call varies; on `read_4k` the same cost is lost in the noise of the file system "
            "calls (see the quartiles).", "",
            table(["case", "path", "context.Background()", "cancellable context", "difference",
                   "quartiles", "pairs"], rows), ""]


def layers_section(ctx):
    res = ctx["res"]
    out = ["## Cost of each layer", "",
           "Median time per call of each layer, and in parentheses what the layer adds to the one "
           "below it. The typed Go API and the fantasy tools call the C ABI differently (output "
           "mode, content buffer), so the two stacks are shown separately. The Rust layers run "
           "in another process (alternating with the Go runs), so small differences across the "
           "Rust/Go boundary are noise.", ""]
    rows = []
    for case in res.order:
        def cell(path, below):
            t = res.t(case, path)
            tb = res.t(case, below) if below else None
            if t is None:
                return "–"
            return fmt_t(t) + ("" if tb is None else f" ({fmt_delta(t - tb)})")
        rows.append((case, fmt_t(res.t(case, "floor")), cell("core", "floor"),
                     cell("cabi_typed", "core"), cell("cgo_typed", "cabi_typed"),
                     cell("typed", "cgo_typed"), cell("cabi_fantasy", "core"),
                     cell("cgo_fantasy", "cabi_fantasy"), cell("fantasy", "cgo_fantasy")))
    out += [table(["case", "floor", "Rust core", "C ABI (typed)", "cgo (typed)", "typed Go API",
                   "C ABI (fantasy)", "cgo (fantasy)", "fantasy tool"], rows), "",
            "Distance from the floor (time / floor time):", ""]
    rows = []
    for case in res.order:
        f = res.t(case, "floor")
        rows.append([case, fmt_t(f)] + [
            fmt_r(res.t(case, p) / f if f and res.t(case, p) is not None else None)
            for p in ("core", "baseline", "typed", "baseline_fantasy", "fantasy")])
    out += [table(["case", "floor", "Rust core", "baseline", "typed Go API", "baseline fantasy",
                   "fantasy"], rows), ""]
    return out


def memory_section(ctx):
    res = ctx["res"]
    order = [c for c in res.order if res.cases[c].get("fs") != "tmpfs"]
    out = ["## Memory", "",
           "Peak RSS growth of one call, each measured in a fresh process after a warm-up call of "
           "the same tool on a small input (`/proc/self/clear_refs` = 5 resets `VmHWM`; growth = "
           "`VmHWM` after the call − `VmRSS` before it). Memory the warm-up already mapped is "
           "reused, so this is what the call itself adds. (The tmpfs cases use what their twins "
           "on disk use.)", ""]
    rss_paths = ("floor", "baseline", "baseline_fantasy", "core", "cabi_typed", "typed", "fantasy")
    out += [table(["case"] + [NAMES[p] for p in rss_paths],
                  [[c] + [fmt_kib(res.rss_kib(c, p)) for p in rss_paths] for c in order]), "",
            "Heap allocated per call (bytes and allocations; Go: `runtime.MemStats` around a few "
            "calls, Rust: a counting global allocator, which also sees the C ABI's strings):", ""]
    mem_paths = ("baseline", "baseline_fantasy", "core", "cabi_typed", "cgo_typed", "typed",
                 "fantasy")
    rows = []
    for c in res.order:
        row = [c]
        for p in mem_paths:
            m = res.mem_of(c, p)
            row.append("–" if m is None else f"{fmt_bytes(m[0])} / {m[1]:.0f}")
        rows.append(row)
    out += [table(["case"] + [NAMES[p] for p in mem_paths], rows), "",
            "The cgo and Go rows count only Go's heap; the Rust library's allocations in the same "
            "calls are in the Rust rows.", ""]
    return out


def chain(kind):
    """The layers of a path, outermost last: (label, path measured, description key)."""
    if kind == "typed":
        return [("core", "core", "core"), ("C ABI", "cabi_typed", "cabi"),
                ("cgo", "cgo_typed", "cgo"), ("Go package", "typed", "go")]
    return [("core", "core", "core"), ("C ABI", "cabi_fantasy", "cabi"),
            ("cgo", "cgo_fantasy", "cgo"), ("fantasy + Go package", "fantasy", "fantasy")]


def misses_section(ctx):
    res = ctx["res"]
    missed = [r for r in ctx["targets"] if r["ok"] is False and r.get("case") in res.cases
              and r.get("chain") in ("typed", "fantasy")]
    if not missed:
        return []
    out = ["## Where targets are not met", "",
           "Per-layer breakdown of each missed target (median time of each layer of that path "
           "and what it adds), and what the floor is made of.", ""]
    for row in missed:
        case, kind = row["case"], row["chain"]
        out += [f"#### {row['label']}: {row['measured']}", ""]
        if row.get("rss"):
            out += [f"Peak RSS growth of one call: floor {fmt_kib(res.rss_kib(case, 'floor'))}, "
                    f"baseline {fmt_kib(res.rss_kib(case, 'baseline'))}, Rust core "
                    f"{fmt_kib(res.rss_kib(case, 'core'))}, C ABI "
                    f"{fmt_kib(res.rss_kib(case, 'cabi_typed'))}, {NAMES[kind]} "
                    f"{fmt_kib(res.rss_kib(case, kind))}.", ""]
            continue
        rows, prev = [], 0.0
        total = res.t(case, kind)
        for label, path, _ in chain(kind):
            t = res.t(case, path)
            own = None if t is None else t - prev
            rows.append((label, fmt_t(t), fmt_delta(own),
                         "– (below the layer under it: noise)" if own is not None and own < 0
                         else ("–" if own is None or not total else f"{own / total * 100:.0f}%")))
            prev = t if t is not None else prev
        out += [table(["layer", "cumulative", "this layer", "share of the total"], rows), ""]
        floor = res.t(case, "floor")
        base = "baseline" if kind == "typed" else "baseline_fantasy"
        b = res.t(case, base)
        text = []
        if floor is not None:
            text.append(f"The floor ({FLOOR_DESC[res.cases[case]['tool']]}) is {fmt_t(floor)}; "
                        f"the {NAMES[base]} takes {fmt_t(b)} and the {NAMES[kind]} "
                        f"{fmt_t(total)}.")
        aa = res.ratio(case, *AA)
        if aa is not None:
            text.append(f"The A/A control of this case: {fmt_ratio(aa)}.")
        m = res.mem_of(case, kind)
        if m:
            text.append(f"Go allocations per call: {fmt_bytes(m[0])} in {m[1]:.0f} allocations "
                        f"({NAMES[base]}: {fmt_bytes((res.mem_of(case, base) or (None, 0))[0])}).")
        out += [" ".join(text), ""]
    return out


def reproducing_section(ctx):
    args = ctx["args"]
    return ["## Reproducing", "",
            "`make bench` (about " + (f"{args.elapsed / 60:.0f}" if args.elapsed else "?")
            + " minutes here) rebuilds this file; `make bench-short` runs every benchmark once "
            "without timing anything. Raw results: `target/bench/full/`. By hand, after `make "
            "build`: `cd go && WSFS_BENCH_TMPFS=/dev/shm WSFS_BENCH_PAIRED_OUT=/tmp/p.jsonl "
            "WSFS_BENCH_CASES=read_4k go test -run TestPaired ./internal/benchmarks` (a small fixture in "
            "a temporary directory). Both Wasm engines side by side: `make bench-wasmtime` (builds the "
            "library with the wasmtime feature in `target/wasmtime`, then writes "
            "`target/bench/wasm-wasmtime.jsonl`, which this report reads).", ""]

WALK_SEARCH = ["search_literal", "search_regex", "find_go"]
WALK_TREE_MAX_RSS_KIB = 2 * 1024


def load_walk(d):
    """benches/walk.rs results: {case: {"desc", "wsfs": [ns], "rg": [ns], "results", "command",
    "entries", "rss_kib"}}, in file order."""
    out = {}
    for r in jsonl(os.path.join(d, "walk.jsonl")):
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
    for r in jsonl(os.path.join(d, "delete.jsonl")):
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

BUILD_SO_MAX = 4 * 2**20
BUILD_CRATES_MAX = 70


def load_build(d):
    """make bench-build's results (target/bench/build.json), if it ran."""
    for path in (os.path.join(d, "build.json"),
                 os.path.join(os.path.dirname(os.path.abspath(d)), "build.json")):
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return json.load(f)
    return {}


def fmt_mib(b):
    return f"{b / 2**20:.1f} MiB"


def build_targets(ctx):
    b = ctx["build"]
    if not b:
        return []
    default = b["default"]
    so = default["sizes"]["libwsfs.so"]["stripped"]
    out = [
        {"label": "default `libwsfs.so`, stripped ≤ 4 MiB", "measured": fmt_mib(so),
         "ok": so <= BUILD_SO_MAX},
        {"label": f"crates compiled for the default library ≤ {BUILD_CRATES_MAX}",
         "measured": str(default["crates_compiled"]),
         "ok": default["crates_compiled"] <= BUILD_CRATES_MAX},
    ]
    base = b.get("baseline")
    if base:
        r = default["seconds"] / base["seconds"]
        out.append({"label": "clean release build of the default library ≤ half the single "
                    "crate's", "measured": f"{fmt_r(r)} ({default['seconds']:.0f} s vs "
                    f"{base['seconds']:.0f} s)", "ok": r <= 0.5})
    return out


def build_section(ctx):
    b = ctx["build"]
    if not b:
        return []
    default = b["default"]
    rows = []

    def row(label, entry, crates):
        so, a = entry["sizes"]["libwsfs.so"], entry["sizes"]["libwsfs.a"]
        rows.append((label, f"{fmt_mib(so['stripped'])} ({fmt_mib(so['built'])})",
                     f"{fmt_mib(a['stripped'])} ({fmt_mib(a['built'])})", crates))

    base = b.get("baseline")
    if base:
        row(f"before the crates (`{base['rev']}`, everything)", base,
            f"{base['crates_compiled']} compiled")
    row("default (file tools, policy, audit, patches, profiles)", default,
        f"{default['crates_compiled']} compiled ({default['crates_in_tree']} in `cargo tree`)")
    for feature, entry in b["features"].items():
        row(f"`--features {feature}`", entry, f"{entry['crates_in_tree']} in `cargo tree`")
    out = ["## Library size and build", "",
           "`bench/build_sizes.py` (`make bench-build`, not part of `make bench`: it builds the "
           "library from an empty target directory): a cold release build of the default "
           "library, then, in the same target directory, the library with each feature set. "
           "Sizes as built, and stripped (`strip`; the archive `strip --strip-debug`). The "
           "release profile keeps no debug info in the libraries (`debug = false`, `strip = "
           "\"debuginfo\"`: a backtrace names functions, not lines) and optimizes the whole "
           "program across the crates (`lto = \"fat\"`, `codegen-units = 1`); the test "
           "suites build with the `release-no-lto` profile instead. Where the default "
           "library's bytes go, what was cut to reach its crate budget and what stays: "
           "[decisions/dependencies.md](decisions/dependencies.md).", "",
           table(["build", "`libwsfs.so` stripped (as built)", "`libwsfs.a` stripped (as built)",
                  "crates"], rows), ""]
    cold = [f"the default library: {default['seconds']:.0f} s (load {default['load_before']:.1f} "
            f"before it, {b['machine']['cpus']} CPUs)"]
    if base:
        cold.append(f"the single crate at `{base['rev']}`: {base['seconds']:.0f} s (load "
                    f"{base['load_before']:.1f})")
    out += ["Clean release builds, wall clock: " + "; ".join(cold) + ".", ""]
    return out


WASM_NOOP_MAX_NS = 500_000
WASM_READ_MAX_RATIO = 3.0


WASM_CASES = ("noop", "echo", "read_4k_wasm", "read_file", "cpu_loop", "load")

# The engines' build figures (docs/PERFORMANCE.md "Wasm engines"): measured by hand, not by
# bench/run.sh (a cold wasmtime build takes tens of minutes). Update them with their commands.
WASM_BUILD = {
    "when": "2026-11-26, cold release builds (`debug = 1`), each in an empty target directory, at `nice -n 19` on this 2-core machine shared with three other builds (load 8-10); ""`bench/wasm_build.py` reads the two `--timings` reports and `cargo metadata`",
    "rows": [
        ("crates only this engine brings", "48 (wasmi, wasmi_wasi, wasi-common, wiggle, "
         "cap-std 3, ...)", "66 more (wasmtime 48.0.8, Cranelift, ...)"),
        ("their compile time, summed per crate", "776 s", "3,016 s"),
        ("all crates, summed", "2,992 s (the default build)", "5,663 s (1.9x)"),
        ("wall clock of the whole cold build", "27 min", "54 min"),
        ("Rust needed", "1.89 (the crate's rust-version)", "1.95 (wasmtime 48's)"),
    ],
    "notes": [
        "The wall clocks are long because every build here ran at the lowest priority beside "
        "three others (the default one also overlapped the wasmtime one); the summed crate "
        "times compare the two under the same conditions: the wasmtime feature roughly "
        "doubles what a cold build compiles and adds about four times what wasmi brings. "
        "wasmi cannot be left out of the default build, so its own share of the library's size "
        "is not measured here (the issue's estimate: +3.6 MB). Commands: `cargo build "
        "--release --locked --timings` and `cargo build --release --locked --timings "
        "--features wasmtime --target-dir target/wasmtime`, then `bench/wasm_build.py "
        "target/cargo-timings/cargo-timing.html target/wasmtime/cargo-timings/cargo-timing.html`.",
        "`make test-wasmtime` on top of that build compiled its two test binaries in about "
        "15 and 5.5 minutes under the same conditions (the Wasm tests then run in seconds); "
        "`make test` does not run it. The Rust example tools that `make test` builds for "
        "wasm32-wasip1 add 4-6 s to a cold run (three crates without dependencies).",
    ],
}


def load_wasm(d):
    """benches/wasm.rs results, {engine: {case: [ns]}}: wasm.jsonl (make bench: wasmi) under
    "wasmi", and, when make bench-wasmtime left target/bench/wasm-wasmtime.jsonl (both engines
    in one process), its runs under "paired:<engine>"."""
    out = {}
    for r in jsonl(os.path.join(d, "wasm.jsonl")):
        out.setdefault(r.get("engine", "wasmi"), {}).setdefault(r["case"], []).extend(r["ns"])
    for path in (os.path.join(d, "wasm-wasmtime.jsonl"),
                 os.path.join(os.path.dirname(os.path.abspath(d)), "wasm-wasmtime.jsonl")):
        if os.path.exists(path):
            for r in jsonl(path):
                out.setdefault("paired:" + r["engine"], {}).setdefault(r["case"], []).extend(r["ns"])
            break
    return out


def wasm_targets(ctx):
    w = ctx["wasm"].get("wasmi", {})
    if not w:
        return []
    noop = med(w.get("noop", []))
    wasm_read, builtin = med(w.get("read_4k_wasm", [])), med(w.get("read_file", []))
    r = wasm_read / builtin if wasm_read and builtin else None
    return [
        {"label": "a cached no-op Wasm tool through `wsfs_call`, end to end (wasmi) ≤ 0.5 ms",
         "measured": fmt_t(noop), "ok": None if noop is None else noop <= WASM_NOOP_MAX_NS,
         "walk": True},
        {"label": f"a Wasm guest reading a 4 KiB workspace file vs `read_file` ≤ {WASM_READ_MAX_RATIO:g}×",
         "measured": f"{fmt_r(r)} ({fmt_t(wasm_read)} vs {fmt_t(builtin)})",
         "ok": None if r is None else r <= WASM_READ_MAX_RATIO, "walk": True},
    ]


def wasm_section(ctx):
    w = ctx["wasm"]
    out = []
    wasmi = w.get("wasmi", {})
    if wasmi:
        out += ["## Wasm tools", "",
                "`benches/wasm.rs`, every call through the library's `wsfs_call` path "
                "(`wsfs::api::call`: dispatch, the arguments checked against the manifest's schema, "
                "a fresh instance of the module compiled at load, the run, the envelope), samples "
                "alternating between the cases, each envelope checked. `noop` prints `{}`; `echo` is "
                "tools/echo; `read_4k_wasm` opens a 4 KiB file through `/workspace` (the resolver "
                "and the policy) and returns its content, against the built-in `read_file` on the "
                "same file; `cpu_loop` spins 10 million loop turns (about 30 million fuel units); "
                "`load` is opening a workspace with the no-op tool (manifest, hash, compile) minus "
                "opening one without. Engine: wasmi (interpreter), the default; both engines side "
                "by side are in [Wasm engines](#wasm-engines).", ""]
        rows = []
        for case in WASM_CASES:
            xs = wasmi.get(case, [])
            if xs:
                rows.append((f"`{case}`", fmt_t(med(xs)), fmt_t(quantile(xs, 0.1)),
                             fmt_t(quantile(xs, 0.9)), len(xs)))
        out += [table(["case", "median (wasmi)", "p10", "p90", "samples"], rows), ""]
    out += ["## Wasm engines", "",
            "The default engine is wasmi, an interpreter: it builds on the crate's own Rust (1.89), "
            "its crates cost a quarter of wasmtime's to build (below), it loads a tool in "
            "microseconds and it meets the call targets above. wasmtime (cargo feature `wasmtime`, 48.x, needs Rust "
            "1.95) compiles each module with Cranelift: worth it for tools that compute (the "
            "`cpu_loop` row), at the price of a much longer cold build, a larger library and "
            "milliseconds per tool at load. A workspace picks it with `wasm_policy.engine = "
            "\"wasmtime\"`; a build with the feature still runs wasmi unless asked "
            "(docs/TOOL_AUTHORING.md, Engines). `make test-wasmtime` runs the Wasm tests on both "
            "engines; it is not part of `make test`.", ""]
    paired = {e[len("paired:"):]: c for e, c in w.items() if e.startswith("paired:")}
    if paired.get("wasmi") and paired.get("wasmtime"):
        a, b = paired["wasmi"], paired["wasmtime"]
        out += ["One process, one engine after the other, the same cases as above "
                "(`make bench-wasmtime`, 2,000 samples):", ""]
        rows = []
        for case in WASM_CASES:
            xs, ys = a.get(case, []), b.get(case, [])
            if xs and ys:
                rows.append((f"`{case}`", fmt_t(med(xs)), fmt_t(med(ys)),
                             fmt_r(med(ys) / med(xs) if med(xs) else None), len(xs)))
        out += [table(["case", "wasmi (median)", "wasmtime (median)", "wasmtime / wasmi",
                       "samples"], rows), ""]
    else:
        out += ["No wasmtime run in this report (`make bench-wasmtime` adds it).", ""]
    out += [f"Building ({WASM_BUILD['when']}):", "",
            table(["", "wasmi (default)", "wasmtime (feature)"], WASM_BUILD["rows"]), ""]
    out += WASM_BUILD["notes"] + [""]
    return out


def python_results(d):
    """bench/python_read.py: {way: {"pairs": [...], "how", "plain_how", "case", "loads"}}."""
    out = {}
    for r in jsonl(os.path.join(d, "python.jsonl")):
        w = out.setdefault(r["way"], {"pairs": [], "loads": []})
        w["pairs"] += r["pairs"]
        w["loads"].append(r.get("load", "?").split()[0])
        for k in ("how", "plain_how", "case", "python"):
            w[k] = r.get(k)
    return out


def python_ratio(w):
    rs = [a / b for a, b in w["pairs"] if b > 0]
    return statistics.median(rs), quantile(rs, 0.25), quantile(rs, 0.75), [], len(rs)


def python_targets(ctx):
    w = ctx["python"].get("fast")
    if not w:
        return []
    r = python_ratio(w)
    return [{"label": f"Python, {w['case']} with the documented fast path ({w['how']}) vs plain "
                      "Python doing the same checks ≤ 1.5×",
             "measured": f"{fmt_ratio(r)}; "
                         f"{fmt_t(statistics.median(a for a, _ in w['pairs']))} vs "
                         f"{fmt_t(statistics.median(b for _, b in w['pairs']))} ({r[4]} pairs)",
             "ok": r[0] <= 1.5}]


def python_section(ctx):
    py = ctx["python"]
    if not py:
        return []
    rows = []
    for way, label in (("fast", "the Python package, `Workspace.read_file`"),
                       ("ctypes_fast", "documented fast path (`data_raw`) by hand, ctypes"),
                       ("full", "`wsfs_read_file`, full envelope (content twice)"),
                       ("fast_vs_lexical", "documented fast path vs plain Python with a lexical "
                                           "check only (not the same contract)")):
        w = py.get(way)
        if not w:
            continue
        r = python_ratio(w)
        rows.append((label, w["how"], fmt_t(statistics.median(a for a, _ in w["pairs"])),
                     w["plain_how"], fmt_t(statistics.median(b for _, b in w["pairs"])),
                     fmt_ratio(r), ", ".join(w["loads"])))
    any_w = next(iter(py.values()))
    return ["## C and Python: read_file through the C ABI", "",
            f"`bench/python_read.py` (Python {any_w.get('python', '?')}), {any_w.get('case')} "
            "of the fixture, paired like the Go benchmarks: one read each way, back to back, "
            "alternating the order; every result's content and SHA-256 are checked. *Plain "
            "Python* is what a Python programmer writes for the same contract: the path "
            "resolved with `os.path.realpath` and checked to be inside the workspace (the usual "
            "confinement idiom; it is not race-free, the library's handles are), `open`, "
            "`fstat` (regular files only), one read of at most max_read_bytes + 1 bytes, NUL and "
            "UTF-8 checks, SHA-256. The documented fast path keeps the content out of the JSON; "
            "the full envelope carries it twice and costs a `json.loads` of both.", "",
            table(["way", "how", "time", "plain Python", "time", "wsfs / plain", "load"], rows),
            ""]


def decode_section(ctx):
    rows_in = jsonl(os.path.join(ctx["args"].dir, "decode.jsonl"))
    if not rows_in:
        return []
    by_case = {}
    for r in rows_in:
        by_case.setdefault(r["case"], []).append(r)
    rows, jt = [], []
    for case, rs in by_case.items():
        hand = next((statistics.median(r["ns"]) for r in rs if r["decoder"].startswith("wsfs")), None)
        for r in rs:
            t = statistics.median(r["ns"])
            rows.append((case, f"{r['bytes']} B", r["decoder"], fmt_t(t),
                         fmt_r(t / hand if hand else None), f"{r['allocs']:.0f}"))
            if r["decoder"].startswith("jsontext") and hand:
                jt.append(t / hand)
    load = rows_in[0].get("load", "?")
    return ["## Go: decoding the envelope", "",
            "Issue 8 asked whether the Go package's hand-written envelope reader "
            "(`go/reader.go`, used by `go/envelope.go`, which falls back to `encoding/json` on anything unexpected) "
            "could be replaced by go-json-experiment's `jsontext` tokens (which validate, "
            "unescape and check UTF-8) with hand field dispatch kept for the result types "
            "(`go/envelope_jt_test.go`). Median time of one decode of a real library envelope "
            "(rounds alternating the decoders, batches of 100) and allocations per decode; "
            "encoding/json and json v2 `Unmarshal` into the same types for reference "
            f"(`go/envelope_bench_test.go`; load {load} at the start):", "",
            table(["envelope", "JSON", "decoder", "time", "vs hand-written", "allocations"], rows),
            "",
            (f"The `jsontext` reader is smaller, but {min(jt):.1f}× to {max(jt):.1f}× the time "
             "of the hand-written one here" if jt else "The `jsontext` reader is smaller")
            + ", with many more allocations (each string it returns is a copy), so the package "
            "keeps its hand-written reader for the typed results of the first five tools; every "
            "other tool's result is decoded with json v2 from the envelope's `data` bytes.",
            ""]


class PatchResults:
    """benches/patch.rs: apply_patch through the Rust core and the C ABI vs `git apply`."""

    def __init__(self, d):
        self.times = {}  # (case, fs_label, path) -> [ns]
        self.desc = {}   # case -> description
        self.order = []  # (case, fs_label), in the order measured
        for r in jsonl(os.path.join(d, "patch.jsonl")):
            key = (r["case"], r["fs_label"])
            if key not in self.order:
                self.order.append(key)
            self.times.setdefault((r["case"], r["fs_label"], r["path"]), []).append(r["ns_per_op"])
            self.desc[r["case"]] = r["desc"]

    def t(self, case, fs, path):
        """Median ns/op, or None."""
        s = self.times.get((case, fs, path))
        return statistics.median(s) if s else None

    def ratio(self, case, fs):
        a, b = self.t(case, fs, "cabi"), self.t(case, fs, "git_apply")
        return a / b if a is not None and b else None


def fs_name(label):
    if label == "tmpfs":
        return "tmpfs (fsync costs nothing)"
    if label.startswith("disk-"):
        return f"disk ({label[5:]}, every fsync reaches the device)"
    return label


def patch_targets(ctx):
    p = ctx["patch"]
    rows = []
    for case, fs in p.order:
        if case != PATCH_TARGET:
            continue
        r = p.ratio(case, fs)
        rows.append({
            "label": f"apply_patch, 100 hunks on a 10,000-line file, {fs_name(fs)}: C ABI vs "
                     "`git apply` ≤ 1.0×",
            "measured": "–" if r is None else f"{fmt_r(r)} ({fmt_t(p.t(case, fs, 'cabi'))} vs "
                        f"{fmt_t(p.t(case, fs, 'git_apply'))})",
            "ok": None if r is None else r <= 1.0,
            "case": case, "chain": "patch"})
    return rows


def patch_section(ctx):
    p = ctx["patch"]
    if not p.order:
        return []
    rows = []
    for case, fs in p.order:
        rows.append((p.desc.get(case, case), fs_name(fs),
                     *(fmt_t(p.t(case, fs, x)) for x in ("core", "cabi", "git_apply")),
                     fmt_r(p.ratio(case, fs))))
    out = ["## apply_patch vs git apply", "",
           "`benches/patch.rs`: a unified diff applied by `wsfs::run_tool` (Rust core), through "
           "the C ABI (`wsfs_call`, the whole envelope with the returned diff), and by `git "
           "apply` started as a process per call, as an agent's shell tool would. Calls "
           "alternate the patch and its reverse, so each does the same work. `git apply` never "
           "fsyncs; apply_patch fsyncs the new file and its directory, and a multi-file patch "
           "also its journal and each directory again around the commit: on tmpfs fsync costs "
           "nothing, so the tmpfs rows compare the work itself, and the disk rows add what "
           "durability costs on this machine's disk. Median per call.", "",
           table(["patch", "filesystem", "Rust core", "C ABI", "git apply", "C ABI / git apply"],
                 rows), ""]
    if any(r["ok"] is False for r in ctx["targets"] if r.get("chain") == "patch"):
        out += ["Where `apply_patch` is slower than `git apply` on a disk, the gap is the "
                "device's fsync latency: `git apply` does not fsync; apply_patch fsyncs the new "
                "file and its directory (and, for several files, its journal).", ""]
    return out


DEVTOOLS_OVERHEAD_MAX_NS = 5e6
DEVTOOLS_INFO_MAX_NS = 50e3
DEVTOOLS_GIT_MAX_RATIO = 1.2


def load_devtools(d):
    """benches/devtools.rs results: {case: {"desc", "tool": [ns], "plain": [ns]}}."""
    out = {}
    for r in jsonl(os.path.join(d, "devtools.jsonl")):
        c = out.setdefault(r["case"], {"tool": [], "plain": []})
        c[r["path"]].append(r["ns"])
        c["desc"] = r["desc"]
    return out


def paired_diffs(c):
    return [a - b for a, b in zip(c["tool"], c["plain"])]


def devtools_targets(dev):
    rows = []
    c = dev.get("runner_overhead")
    if c:
        over = med(paired_diffs(c))
        rows.append({
            "label": f"the runner's overhead (`shell` of `true` vs `Command` of the same) "
                     f"≤ +{fmt_t(DEVTOOLS_OVERHEAD_MAX_NS)}",
            "measured": f"+{fmt_t(over)} ({fmt_t(med(c['tool']))} vs {fmt_t(med(c['plain']))})",
            "ok": None if over is None else over <= DEVTOOLS_OVERHEAD_MAX_NS, "walk": True,
        })
    c = dev.get("workspace_info_cached")
    if c:
        t = med(c["tool"])
        rows.append({
            "label": f"`workspace_info`, cached ≤ {fmt_t(DEVTOOLS_INFO_MAX_NS)}",
            "measured": fmt_t(t),
            "ok": None if t is None else t <= DEVTOOLS_INFO_MAX_NS, "walk": True,
        })
    for case, c in dev.items():
        if not case.startswith("git_status_"):
            continue
        ratios = [a / b for a, b in zip(c["tool"], c["plain"]) if b]
        r = med(ratios)
        rows.append({
            "label": f"{c['desc']}: ≤ {DEVTOOLS_GIT_MAX_RATIO}×",
            "measured": f"{fmt_r(r)} ({fmt_t(med(c['tool']))} vs {fmt_t(med(c['plain']))})",
            "ok": None if r is None else r <= DEVTOOLS_GIT_MAX_RATIO, "walk": True,
        })
    return rows


def devtools_section(w, dev):
    if not dev:
        return
    w("## Developer tools")
    w("")
    w("`benches/devtools.rs`, each through the library's `wsfs_call` path (dispatch, the policy "
      "switch, resolution of `cwd`, the sandbox, spawn, capture, the text and the envelope): "
      "`shell {\"command\": \"true\"}` (bash runs `true` under Landlock, seccomp, a pids "
      "cgroup, rlimits, a rebuilt environment and a private temp directory) against "
      "`std::process::Command` running the same `bash --noprofile --norc -c true`, paired, "
      "alternating which runs first (the overhead is the median paired difference); "
      "`workspace_info` answered from its cache after a first call probed; `git_status` "
      "(hardened git: the repository's config read first, overrides appended, the output "
      "parsed) against `git status --porcelain=v2 --branch -z` run directly, paired, "
      "alternating (the ratio is the median of the paired ratios); overlay mode's cost per "
      "program: `shell` on an overlay session (the run's own upper and work directories, "
      "user and mount namespaces, id maps, the mount of run upper + session + base, its "
      "Landlock rule, then the adoption of what the program changed into the session) against "
      "`shell` on a host-mode workspace of the same files, paired, alternating: `true`, and a "
      "script writing 1,000 new files (each touched and renamed into the session).")
    w("")
    rows = []
    for case, c in dev.items():
        t, p = med(c["tool"]), med(c["plain"]) if c["plain"] else None
        diff = med(paired_diffs(c)) if c["plain"] else None
        rows.append((c["desc"], fmt_t(t), fmt_t(p) if p else "–",
                     f"+{fmt_t(diff)}" if diff is not None else "–",
                     fmt_r(t / p) if t and p else "–", len(c["tool"])))
    w(table(["case", "wsfs", "direct", "median paired difference", "wsfs / direct",
             "samples"], rows))
    w("")


def walk_targets_of(ctx):
    return walk_targets(ctx["walk"])


def walk_section_of(ctx):
    out = []
    walk_section(out.append, ctx["walk"], ctx["res"].machine)
    return out


def delete_targets_of(ctx):
    return delete_targets(ctx["delete"])


def delete_section_of(ctx):
    out = []
    delete_section(out.append, ctx["delete"])
    return out


def devtools_targets_of(ctx):
    return devtools_targets(ctx["devtools"])


def devtools_section_of(ctx):
    out = []
    devtools_section(out.append, ctx["devtools"])
    return out


def overlay_targets(ctx):
    """Issue 20's targets: the store's (diff, checkpoint, rewind, commit) and the view's reads."""
    rows = []
    for r in jsonl(os.path.join(ctx["args"].dir, "overlay.jsonl")):
        if r["bench"] == "diff":
            rows.append({
                "label": f"overlay: diff of {r['changed']:,} changed files "
                         f"({r['base_files']:,}-file base) < 1 s",
                "measured": f"{fmt_t(r['ns'])} ({r.get('syscalls')} system calls)",
                "ok": r["ns"] < 1e9, "walk": True,
            })
        elif r["bench"] == "commit":
            ratio = r.get("ratio") or (r["commit_ns"] / r["host_writes_ns"]
                                       if r["host_writes_ns"] else None)
            rows.append({
                "label": f"overlay: commit of {r['files']:,} files ≤ 1.5× the same writes "
                         f"in host mode",
                "measured": f"{fmt_r(ratio)} ({fmt_t(r['commit_ns'])} vs "
                            f"{fmt_t(r['host_writes_ns'])}; "
                            + (f"median of {r['pairs']} paired ratios"
                               if "pairs" in r else "medians of unpaired samples")
                            + commit_spread(r)
                            + f", load {r.get('load')})",
                "ok": None if ratio is None else ratio <= 1.5, "walk": True,
            })
        elif r["bench"] == "checkpoint":
            rows.append({
                "label": f"overlay: a checkpoint after {r['touched']} touched files "
                         f"({r['base_files']:,}-file base) < 10 ms",
                "measured": fmt_t(r["ns"]),
                "ok": r["ns"] < 10e6, "walk": True,
            })
        elif r["bench"] == "rewind":
            ratio = r["rewind_ns"] / r["commit_ns"] if r["commit_ns"] else None
            rows.append({
                "label": f"overlay: rewind of {r['paths']} paths ≤ commit of the same paths",
                "measured": f"{fmt_r(ratio)} ({fmt_t(r['rewind_ns'])} vs {fmt_t(r['commit_ns'])})",
                "ok": None if ratio is None else ratio <= 1.0, "walk": True,
            })
    for r in jsonl(os.path.join(ctx["args"].dir, "overlay_view.jsonl")):
        rows.append({
            "label": f"overlay: read_file of a {r['file']} {r['bytes']}-byte file ≤ "
                     f"{r['limit']}× host mode",
            "measured": f"{r['ratio']:.3f}× ({fmt_t(r['overlay_ns'])} vs {fmt_t(r['host_ns'])})",
            "ok": r["ratio"] <= r["limit"], "walk": True,
        })
    return rows


def overlay_section(ctx):
    """benches/overlay.rs: the overlay session store (issue 20)."""
    rows = jsonl(os.path.join(ctx["args"].dir, "overlay.jsonl"))
    if not rows:
        return []
    out = ["## Overlay session store (`benches/overlay.rs`)", "",
           "`wsfs::overlay::Session` (issue 20's store), measured by `cargo bench --bench overlay` "
           "(`make bench` runs it): `diff` of 1,000 changed "
           "files in bases of different sizes (its system calls counted by `strace -c` on a "
           "child that opens the session and diffs once, minus one that only opens it: they do "
           "not grow with the base), a checkpoint after 100 touched files (target: under 10 ms), "
           "`touch` per path (a first touch without and after a checkpoint, and the first touch "
           "after a checkpoint of a path already changed, which takes its before-image), `rewind` "
           "of 100 and 1,000 changed paths back to their content at a checkpoint paired with "
           "`commit` of the same paths (target: the rewind at most the commit's cost; medians of "
           "samples alternating which goes first), and `commit` of 1,000 files against the same "
           "writes through `write_file` in host mode. The load column is the 1-minute load "
           "average when the case ended (2 cores).", ""]
    table_rows = []
    for r in rows:
        load = f"{r['load']:.2f}" if r.get("load") is not None else ""
        if r["bench"] == "diff":
            table_rows.append([f"diff, {r['changed']} changed, {r['base_files']:,}-file base",
                               fmt_t(r["ns"]), str(r.get("syscalls")), load])
        elif r["bench"] == "checkpoint":
            table_rows.append([f"checkpoint after {r['touched']} touched, {r['base_files']:,}-file base",
                               fmt_t(r["ns"]), "", load])
        elif r["bench"] == "touch":
            if r.get("first_no_checkpoint_ns") is not None:
                table_rows.append(["touch, first, no checkpoint (per path)",
                                   fmt_t(r["first_no_checkpoint_ns"]), "", load])
            table_rows.append(["touch, first, after a checkpoint (per path)",
                               fmt_t(r["first_ns"]), "", load])
            table_rows.append(["touch, a changed path, first after a checkpoint: its before-image (per path)",
                               fmt_t(r["changed_after_checkpoint_ns"]), "", load])
        elif r["bench"] == "rewind":
            ratio = r["rewind_ns"] / r["commit_ns"] if r["commit_ns"] else 0
            table_rows.append([f"rewind of {r['paths']} paths (commit of the same paths: "
                               f"{fmt_t(r['commit_ns'])}, {ratio:.2f}x)", fmt_t(r["rewind_ns"]), "", load])
        elif r["bench"] == "commit":
            of_medians = r["commit_ns"] / r["host_writes_ns"] if r["host_writes_ns"] else 0
            paired = (f"median of {r['pairs']} paired ratios {r['ratio']:.2f}x{commit_spread(r)}, "
                      if r.get("ratio") else "")
            table_rows.append([f"commit of {r['files']} files (host write_file: {fmt_t(r['host_writes_ns'])}; "
                               f"{paired}ratio of the medians {of_medians:.2f}x)",
                               fmt_t(r["commit_ns"]), "", load])
    out.append(table(["case", "median", "system calls", "load"], table_rows))
    out.append("")
    return out


def overlay_view_section(ctx):
    """benches/overlay_view.rs: overlay mode's reads against host mode (issue 20)."""
    rows = jsonl(os.path.join(ctx["args"].dir, "overlay_view.jsonl"))
    if not rows:
        return []
    out = ["## Overlay mode reads (`benches/overlay_view.rs`)", "",
           "`read_file` of a 4 KiB file through `wsfs_call` in an overlay workspace against "
           "the same call in a host-mode workspace on the same base, alternating; the ratio is "
           "the median of the paired ratios. Untouched: the file is only in the base (the "
           "kernel overlay view reads it there); touched: it was written in the session, so it "
           "is in the upper tree (the host reads a file it rewrote likewise). The overlay "
           "workspace mounts its view afresh about once a second (the default refresh).", ""]
    table_rows = []
    for r in rows:
        verdict = "meets" if r["ratio"] <= r["limit"] else "misses"
        table_rows.append([f"{r['file']} file, {r['bytes']} bytes", fmt_t(r["host_ns"]),
                           fmt_t(r["overlay_ns"]), f"{r['ratio']:.3f}x",
                           f"{r['limit']}x ({verdict})", str(r["samples"])])
    out.append(table(["read", "host median", "overlay median", "overlay / host",
                      "target", "samples"], table_rows))
    out.append("")
    return out


def agentfs_section(ctx):
    """The agentfs probe's figures (issue 20): measured by probes/agentfs/run.sh, not by
    make bench (it builds a database engine for minutes); kept verbatim from its summary."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probes", "agentfs",
                        "PERFORMANCE-section.md")
    try:
        with open(path) as f:
            return f.read().rstrip("\n").split("\n") + [""]
    except OSError:
        return []


# The document: sections in order, and the functions that add targets. A new benchmark adds
# its section (a function of ctx returning lines) and, if it has targets, a target function.
SECTIONS = [
    header_section,
    method_section,
    headline_section,
    targets_section,
    cases_section,
    writes_section,
    context_section,
    layers_section,
    memory_section,
    python_section,
    decode_section,
    walk_section_of,
    patch_section,
    delete_section_of,
    overlay_section,
    overlay_view_section,
    agentfs_section,
    build_section,
    wasm_section,
    devtools_section_of,
    misses_section,
    reproducing_section,
]
TARGETS = [issue9_targets, python_targets, scale_targets, walk_targets_of, patch_targets,
           delete_targets_of, overlay_targets, wasm_targets, devtools_targets_of, build_targets]


def main():
    args = parse_args()
    res = Results(args.dir)
    if not res.pairs and not res.rust:
        sys.exit(f"report.py: no benchmark results in {args.dir}")
    ctx = {"res": res, "args": args, "walk": load_walk(args.dir), "headlines": [],
           "python": python_results(args.dir), "patch": PatchResults(args.dir),
           "delete": load_delete(args.dir), "wasm": load_wasm(args.dir),
           "devtools": load_devtools(args.dir), "build": load_build(args.dir)}
    ctx["targets"] = [] if args.short else [r for f in TARGETS for r in f(ctx)]
    md = []
    for section in SECTIONS:
        if args.short and section in (headline_section, targets_section, misses_section):
            continue
        md += section(ctx)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    if args.short:
        print(f"report.py: wrote {args.out} (short mode: no targets evaluated)")
    else:
        met = sum(1 for r in ctx["targets"] if r["ok"])
        print(f"report.py: wrote {args.out} ({met}/{len(ctx['targets'])} targets met)")


if __name__ == "__main__":
    main()
