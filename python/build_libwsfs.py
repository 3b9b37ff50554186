"""Builds libwsfs with cargo for ``setup.py``, saying what it is doing while cargo runs.

Kept apart from ``setup.py`` (and free of setuptools) so the tests can run it with a stand-in
cargo. pip runs a build backend with its output captured and shows it only with ``-v``, so a
first build, which compiles the whole crate graph (several minutes on a small machine), would
look hung: what is happening, and for how long so far, goes to the terminal when there is one
(``/dev/tty``, which pip does not capture), else to stderr (pip's build log, shown with ``-v``
or when the build fails). cargo's own messages go to stderr as before.

Environment: ``CARGO`` (the cargo to run), ``CARGO_TARGET_DIR`` (honoured by cargo),
``WSFS_BUILD_PROGRESS_SECONDS`` (how often a progress line is written; default 30).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

HERE = Path(__file__).resolve().parent
MANIFEST = HERE.parent / "Cargo.toml"
LIB_NAME = "libwsfs.so"
CRATE = "wsfs"


def find_cargo() -> str:
    for candidate in (os.environ.get("CARGO"), shutil.which("cargo"), str(Path.home() / ".cargo/bin/cargo")):
        if candidate and Path(candidate).is_file():
            return candidate
    sys.exit("building wsfs needs Rust's cargo (https://rustup.rs); put it on PATH or set CARGO")


def build_library() -> Path:
    """Runs cargo and returns the path of the built libwsfs.so."""
    if not MANIFEST.is_file():
        sys.exit(
            f"wsfs: {MANIFEST} not found. The Python package builds the Rust crate it sits in: "
            "install it from a wsfs checkout with `pip install ./python` (not from an sdist)."
        )
    cmd = [
        find_cargo(),
        "build",
        "--release",
        "--locked",
        "--lib",
        # The Python package offers every face of the library (sessions, developer tools,
        # Wasm tools): it is built with every feature but the wasmtime engine.
        "--features",
        "full",
        "--manifest-path",
        str(MANIFEST),
        "--message-format=json-render-diagnostics",
    ]
    print("wsfs: " + " ".join(cmd), flush=True)
    with Progress() as progress:
        return _run_cargo(cmd, progress)


def _run_cargo(cmd: list[str], progress: Progress) -> Path:
    progress.say(
        "building libwsfs with cargo. A first build compiles every dependency: several "
        "minutes (about 5 on 2 cores); a checkout built before is reused in seconds. "
        "(pip install -v shows cargo's own output.)"
    )
    built: Path | None = None
    # Diagnostics and cargo's status lines go to stderr; stdout carries one JSON message per
    # line, each finished crate among them.
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc, progress.running():
        assert proc.stdout is not None
        for line in proc.stdout:
            message = json.loads(line) if line.startswith("{") else {}
            if message.get("reason") != "compiler-artifact":
                continue
            progress.finished_crate(message["target"]["name"], fresh=message.get("fresh", False))
            if message["target"]["name"] == CRATE:
                for filename in message.get("filenames", []):
                    if filename.endswith("/" + LIB_NAME):
                        built = Path(filename)
    if proc.returncode != 0:
        progress.say(f"cargo build failed after {progress.elapsed()}")
        sys.exit(f"wsfs: cargo build failed (exit {proc.returncode}); see its messages above")
    if built is None:
        sys.exit(f"wsfs: cargo did not report building {LIB_NAME}")
    progress.say(f"libwsfs built in {progress.elapsed()} ({progress.summary()})")
    return built


class Progress:
    """Progress lines of one cargo build: one at the start, one every interval while cargo
    runs (elapsed time, crates compiled so far, the last one), one at the end."""

    def __init__(self, interval: float | None = None) -> None:
        if interval is None:
            interval = float(os.environ.get("WSFS_BUILD_PROGRESS_SECONDS", "30"))
        self.interval = interval
        self.started = time.monotonic()
        self.compiled = 0
        self.reused = 0
        self.last = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._out, self._terminal = _output()
        self._first = True

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._terminal:
            self._out.close()

    def say(self, text: str) -> None:
        line = f"wsfs: {text}"
        if self._terminal:
            # pip's spinner shares the terminal: start on a line of our own the first time,
            # then overwrite the spinner character it leaves at the start of the line.
            line = ("\n" if self._first else "\r") + line + "\x1b[K"
        self._first = False
        with self._lock:
            try:
                self._out.write(line + "\n")
                self._out.flush()
            except OSError:  # a terminal that went away must not fail the build
                pass

    def finished_crate(self, name: str, *, fresh: bool) -> None:
        with self._lock:
            if fresh:
                self.reused += 1
            else:
                self.compiled += 1
                self.last = name

    def elapsed(self) -> str:
        seconds = int(time.monotonic() - self.started)
        return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"

    def summary(self) -> str:
        with self._lock:
            compiled, reused, last = self.compiled, self.reused, self.last
        if compiled == 0 and reused == 0:
            return "cargo is fetching and checking the dependencies"
        text = f"{compiled} {_crates(compiled)} compiled" + (f", {reused} reused" if reused else "")
        return text + (f", last {last}" if last else "")

    def running(self) -> _Ticker:
        return _Ticker(self)

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self.say(f"{self.elapsed()}: still building, {self.summary()}")


class _Ticker:
    """Writes a progress line every interval while the ``with`` block runs."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.thread = threading.Thread(target=progress._tick, name="wsfs-build-progress", daemon=True)

    def __enter__(self) -> _Ticker:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress._stop.set()
        self.thread.join()


def _crates(count: int) -> str:
    return "crate" if count == 1 else "crates"


def _output() -> tuple[TextIO, bool]:
    """The controlling terminal if there is one (pip captures stdout and stderr), else stderr."""
    try:
        return open("/dev/tty", "w", encoding="utf-8"), True  # noqa: SIM115 - lives with the build
    except OSError:  # no controlling terminal: CI, a service, a detached session
        return sys.stderr, False
