"""Threads on one workspace, cancel tokens and timeouts."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import wsfs

from conftest import write

THREADS = 16
APPENDS = 200


def test_many_threads_appending_lose_nothing(ws, root):
    def work(i: int) -> None:
        for j in range(APPENDS):
            ws.append_file("log.txt", f"{i}-{j}\n")

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(work, range(THREADS)))
    lines = (root / "log.txt").read_text().splitlines()
    assert sorted(lines) == sorted(f"{i}-{j}" for i in range(THREADS) for j in range(APPENDS))


def test_mixed_calls_from_many_threads(ws, root):
    write(root / "shared.txt", "counter\n")

    def work(i: int) -> None:
        for j in range(50):
            ws.write_file(f"t{i}/f{j}.txt", f"{i}:{j}")
            assert ws.read_file(f"t{i}/f{j}.txt").content == f"{i}:{j}"
            assert ws.get_path_info("shared.txt").exists
            ws.append_file("shared.txt", "+")
        assert len(ws.list_dir(f"t{i}").entries) == 50

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    assert (root / "shared.txt").read_text() == "counter\n" + "+" * 400
    assert len(ws.find_files("*.txt", max_results=1000).files) == 401


def test_close_while_calls_are_in_flight(root):
    ws = wsfs.Workspace(root)
    write(root / "f.txt", "x")
    outcomes: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(300):
            try:
                ws.read_file("f.txt")
                outcome = "ok"
            except wsfs.InvalidWorkspace:
                outcome = "closed"
            with lock:
                outcomes.append(outcome)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    ws.close()
    for t in threads:
        t.join()
    assert set(outcomes) <= {"ok", "closed"} and len(outcomes) == 1800
    with pytest.raises(wsfs.InvalidWorkspace):
        ws.read_file("f.txt")


def test_a_cancelled_token_stops_calls_and_changes_nothing(ws, root):
    with wsfs.CancelToken() as token:
        ws.write_file("kept.txt", "old", cancel=token)  # not cancelled yet: runs
        token.cancel()
        assert token.cancelled
        with pytest.raises(wsfs.Cancelled):
            ws.write_file("new.txt", "x", cancel=token)
        with pytest.raises(wsfs.Cancelled):
            ws.write_file("kept.txt", "new", cancel=token)
        with pytest.raises(wsfs.Cancelled):
            ws.append_file("kept.txt", "more", cancel=token)
        assert ws.call("list_dir", cancel=token)["error"]["code"] == "cancelled"
    assert not (root / "new.txt").exists() and (root / "kept.txt").read_text() == "old"
    with pytest.raises(wsfs.InvalidArguments, match="closed"):
        ws.read_file("kept.txt", cancel=token)  # a closed token is refused, not ignored


def test_cancel_from_another_thread_while_calls_run(ws, root):
    """Many calls share one token; another thread cancels it midway. Every call either
    completed (its file is whole) or was cancelled (no file), and later calls are cancelled."""
    token = wsfs.CancelToken()
    results: dict[int, str] = {}

    def work(i: int) -> None:
        for j in range(100):
            name = f"c/{i}-{j}.txt"
            try:
                ws.write_file(name, "data", cancel=token)
                results[i * 1000 + j] = "ok"
            except wsfs.Cancelled:
                results[i * 1000 + j] = "cancelled"

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    while len(results) < 20:
        threading.Event().wait(0.001)
    token.cancel()
    for t in threads:
        t.join()
    token.close()
    assert "cancelled" in results.values()
    for key, outcome in results.items():
        path = root / "c" / f"{key // 1000}-{key % 1000}.txt"
        assert path.exists() == (outcome == "ok"), (path, outcome)
        if outcome == "ok":
            assert path.read_text() == "data"


def test_timeouts(ws, root):
    with pytest.raises(wsfs.Timeout):
        ws.write_file("t.txt", "x", timeout=0)  # 0 has already expired
    assert not (root / "t.txt").exists()
    # 20,000 files: a walk of them takes several milliseconds even on a fast idle machine
    # (3,000 sometimes finished within the 1 ms deadline).
    for d in range(100):
        (root / "many" / f"d{d}").mkdir(parents=True)
        for f in range(200):
            os.close(os.open(root / "many" / f"d{d}" / f"f{f}.txt", os.O_CREAT | os.O_WRONLY))
    with pytest.raises(wsfs.Timeout):
        ws.find_files("*.nothing", timeout=0.001)  # walking 20,000 files takes longer
    assert ws.find_files("*.nothing", timeout=60).files == ()
    assert ws.read_file("many/d0/f0.txt", timeout=float("inf")).content == ""
    with pytest.raises(ValueError):
        ws.read_file("x", timeout=-1)
