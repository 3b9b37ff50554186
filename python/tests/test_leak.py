"""Every returned string is freed: 100k calls do not grow the process's memory.

The same measurement is run on calls that deliberately leak (a ``c_char_p`` restype, and
the package with ``wsfs_string_free`` skipped), and must see them: the bound is meaningful."""

from __future__ import annotations

import ctypes
import gc
import os

import pytest

import wsfs
from wsfs import _native

from conftest import write

CALLS = 100_000
WARMUP = 5_000
# Each result below is about 500 bytes: 100k leaked results are > 50 MB. Calls that free
# their results stay within a few hundred KiB (allocator noise); the bound sits between.
BOUND = 16 << 20
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def growth(call, calls: int = CALLS) -> int:
    for _ in range(WARMUP):
        call()
    gc.collect()
    before = rss()
    for _ in range(calls):
        call()
    gc.collect()
    return rss() - before


@pytest.fixture
def leak_ws(root):
    write(root / "f.txt", "x" * 300)
    with wsfs.Workspace(root) as ws:
        yield ws


def test_results_are_freed(leak_ws):
    typed = growth(lambda: leak_ws.read_file("f.txt"))  # data_raw fast path
    assert typed < BOUND, f"RSS grew {typed >> 10} KiB over {CALLS} reads"
    full = growth(lambda: leak_ws.get_path_info("f.txt"), CALLS // 4)  # full envelopes
    assert full < BOUND // 4, f"RSS grew {full >> 10} KiB over {CALLS // 4} get_path_info calls"


def test_the_measurement_sees_a_c_char_p_leak(leak_ws):
    leaky = ctypes.CDLL(_native.library_path())  # its own function objects, same library
    fn = leaky.wsfs_call_with_options
    fn.argtypes = [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
    fn.restype = ctypes.c_char_p  # copies the string into bytes and drops the pointer
    args, options = b'{"path":"f.txt"}', b'{"output":"data_raw"}'
    assert fn(leak_ws.handle, b"read_file", args, options).endswith(b"x" * 300)
    leaked = growth(lambda: fn(leak_ws.handle, b"read_file", args, options))
    assert leaked > BOUND, f"a c_char_p leak grew RSS by only {leaked >> 10} KiB"


def test_the_measurement_sees_a_missing_free(leak_ws, monkeypatch):
    monkeypatch.setattr(_native, "take", lambda lib, ptr: ctypes.string_at(ptr))
    leaked = growth(lambda: leak_ws.read_file("f.txt"))
    assert leaked > BOUND, f"skipping wsfs_string_free grew RSS by only {leaked >> 10} KiB"
