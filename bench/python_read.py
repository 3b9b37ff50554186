#!/usr/bin/env python3
"""read_file from Python through libwsfs.so, against plain Python doing the same job.

Usage: bench/python_read.py --lib target/release/libwsfs.so --workspace WS --path small/f4k.txt
                            --out python.jsonl [--seconds 3] [--short]

Paired like the Go benchmarks: one read each way, back to back, alternating which goes first;
each pair gives one ratio. Four ways of reading:

- plain: what a Python programmer writes for the same contract without wsfs: the path made
  absolute and resolved (os.path.realpath) and checked to be inside the workspace, open,
  fstat (regular files only), one read of at most max_read_bytes + 1 bytes sized from
  st_size, NUL and UTF-8 checks (bytes.decode), SHA-256 of a whole file within
  max_write_bytes;
- wsfs (package): the wsfs Python package (`python/` in the repository) on this library,
  `Workspace(root).read_file(path)`, which takes the documented fast path;
- wsfs (ctypes fast path): that fast path by hand, output "data_raw": the JSON head, a
  newline, the content unescaped (json.loads of the small head, the content decoded from
  bytes);
- wsfs (full envelope): `wsfs_read_file`, whose default envelope carries the content twice
  (`data.content` and `text`), parsed with json.loads: what the fast path avoids.

Every read's content and SHA-256 are checked against the file. Writes JSON lines to --out.
"""

import argparse
import ctypes
import hashlib
import json
import os
import stat
import statistics
import sys
import time

MAX_READ = 256 * 1024
MAX_WRITE = 1024 * 1024


class NotText(Exception):
    pass


def plain_reader(root, resolve=True):
    """read_file in plain Python, with the checks the contract asks for. Without resolve, the
    path is only normalised (os.path.normpath), which symlinks escape: not the same contract,
    shown for reference."""
    root = os.path.realpath(root)
    prefix = root + os.sep
    absolute = os.path.realpath if resolve else os.path.normpath

    def read(path):
        full = absolute(os.path.join(root, path))
        if full != root and not full.startswith(prefix):
            raise PermissionError(f"{path} is outside the workspace")
        with open(full, "rb", buffering=0) as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise IsADirectoryError(f"{path} is not a regular file")
            # Sized from st_size (a read of max_read_bytes + 1 would allocate that much).
            data = f.read(min(st.st_size, MAX_READ) + 1)
        truncated = len(data) > MAX_READ
        if truncated:
            data = data[:MAX_READ]
        if b"\0" in data:
            raise NotText(path)
        text = data.decode("utf-8", errors="strict")  # a cut sequence is ignored here
        sha = hashlib.sha256(data).hexdigest() if not truncated and len(data) <= MAX_WRITE else None
        return text, sha

    if not resolve:
        return read, "open().read() + normpath check (symlinks not resolved), fstat, NUL and UTF-8 checks, sha256"
    return read, "open().read() + realpath check, fstat, NUL and UTF-8 checks, sha256"


class Lib:
    """The C ABI through ctypes: results kept as raw pointers so they are freed once."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        lib.wsfs_workspace_open.argtypes = [ctypes.c_char_p]
        lib.wsfs_workspace_open.restype = ctypes.c_void_p
        lib.wsfs_workspace_close.argtypes = [ctypes.c_uint64]
        lib.wsfs_workspace_close.restype = ctypes.c_void_p
        lib.wsfs_read_file.argtypes = [ctypes.c_uint64, ctypes.c_char_p]
        lib.wsfs_read_file.restype = ctypes.c_void_p
        lib.wsfs_call_with_options.argtypes = [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_char_p,
                                               ctypes.c_char_p]
        lib.wsfs_call_with_options.restype = ctypes.c_void_p
        lib.wsfs_string_free.argtypes = [ctypes.c_void_p]
        lib.wsfs_string_free.restype = None
        self.lib = lib

    def take(self, ptr):
        try:
            return ctypes.string_at(ptr)
        finally:
            self.lib.wsfs_string_free(ptr)

    def open(self, root):
        env = json.loads(self.take(self.lib.wsfs_workspace_open(json.dumps({"root": root}).encode())))
        if not env["ok"]:
            raise RuntimeError(env["text"])
        return env["data"]["workspace"]


def package_reader(lib_path, root):
    """The Python package (`python/` in the repository, on this library): Workspace.read_file,
    which takes the documented fast path. An import failure stops the benchmark: it must not
    quietly measure something else."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ["WSFS_LIB"] = os.path.abspath(lib_path)
    sys.path.insert(0, os.path.join(repo, "python"))
    import wsfs  # noqa: PLC0415 (found through the sys.path entry above)

    ws = wsfs.Workspace(root)

    def read(path):
        r = ws.read_file(path)
        return r.content, r.sha256

    return read, "the wsfs Python package: Workspace.read_file (data_raw)"


def ctypes_fast_reader(lib_path, root):
    """The documented fast path by hand through ctypes, for a host without the package."""
    lib = Lib(lib_path)
    handle = lib.open(root)
    call, take = lib.lib.wsfs_call_with_options, lib.take
    options = b'{"output":"data_raw"}'

    def read(path):
        raw = take(call(handle, b"read_file", b'{"path":' + json.dumps(path).encode() + b"}", options))
        head, _, content = raw.partition(b"\n")
        env = json.loads(head)
        if not env["ok"]:
            raise RuntimeError(env["text"])
        return content.decode("utf-8"), env["data"].get("sha256")

    return read, 'ctypes: wsfs_call_with_options(..., "read_file", ..., {"output":"data_raw"})'


def full_reader(lib_path, root):
    """wsfs_read_file and its default envelope, content twice, through json.loads."""
    lib = Lib(lib_path)
    handle = lib.open(root)
    call, take = lib.lib.wsfs_read_file, lib.take

    def read(path):
        env = json.loads(take(call(handle, b'{"path":' + json.dumps(path).encode() + b"}")))
        if not env["ok"]:
            raise RuntimeError(env["text"])
        return env["data"]["content"], env["data"].get("sha256")

    return read, "ctypes: wsfs_read_file (the full envelope), json.loads"


def paired(a, b, path, seconds, want, short):
    """Rounds of one read each way, alternating the order; [(ns_a, ns_b)]."""
    pairs = []
    for f in (a, b):  # warm up and check
        if f(path) != want:
            raise SystemExit(f"python_read: wrong result from {f}")
    deadline = time.perf_counter() + seconds
    clock = time.perf_counter_ns
    while True:
        k = len(pairs)
        first, second = (a, b) if k % 2 == 0 else (b, a)
        t0 = clock()
        r1 = first(path)
        t1 = clock()
        r2 = second(path)
        t2 = clock()
        if r1 != want or r2 != want:
            raise SystemExit("python_read: wrong result")
        pairs.append((t1 - t0, t2 - t1) if k % 2 == 0 else (t2 - t1, t1 - t0))
        if short or (len(pairs) >= 200 and time.perf_counter() > deadline):
            return pairs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", required=True)
    p.add_argument("--workspace", required=True)
    p.add_argument("--path", default="small/f4k.txt")
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--rep", type=int, default=1)
    p.add_argument("--short", action="store_true")
    args = p.parse_args()
    root = os.path.realpath(args.workspace)
    data = open(os.path.join(root, args.path), "rb").read()
    want = (data.decode("utf-8"), hashlib.sha256(data).hexdigest())
    plain, plain_how = plain_reader(root)
    lexical, lexical_how = plain_reader(root, resolve=False)
    fast, fast_how = package_reader(args.lib, root)
    ctypes_fast, ctypes_fast_how = ctypes_fast_reader(args.lib, root)
    full, full_how = full_reader(args.lib, root)
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    with open(args.out, "a", encoding="utf-8") as out:
        for name, f, how, plain, plain_how in (
                ("fast", fast, fast_how, plain, plain_how),
                ("ctypes_fast", ctypes_fast, ctypes_fast_how, plain, plain_how),
                ("full", full, full_how, plain, plain_how),
                ("fast_vs_lexical", fast, fast_how, lexical, lexical_how)):
            pairs = paired(f, plain, args.path, args.seconds, want, args.short)
            ratios = [x / y for x, y in pairs]
            line = {"case": f"read {len(data) // 1024} KiB", "path": args.path, "way": name,
                    "how": how, "plain_how": plain_how, "rep": args.rep, "load": load,
                    "pairs": pairs, "python": sys.version.split()[0]}
            out.write(json.dumps(line) + "\n")
            print(f"python_read: {name}/plain {statistics.median(ratios):.2f}x "
                  f"({statistics.median(x for x, _ in pairs) / 1e3:.1f} us vs "
                  f"{statistics.median(y for _, y in pairs) / 1e3:.1f} us, {len(pairs)} pairs)",
                  file=sys.stderr)


if __name__ == "__main__":
    main()
