"""`pip install ./python` says what its cargo build is doing and for how long.

pip shows a build backend's output only with -v, so without these lines a first build (minutes
of compiling) looks hung. build_libwsfs.py runs here with a stand-in cargo that reports crates
slowly, in a session without a terminal, so the lines go to stderr."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO

LIB = "libwsfs.so"

FAKE_CARGO = textwrap.dedent(
    """\
    #!{python}
    import json, sys, time
    def artifact(name, fresh, filenames=()):
        print(json.dumps({{"reason": "compiler-artifact", "target": {{"name": name, "kind": ["lib"]}},
                          "fresh": fresh, "filenames": list(filenames)}}), flush=True)
    print("   Compiling serde v1.0.0", file=sys.stderr, flush=True)
    artifact("libc", True)
    artifact("serde", False)
    time.sleep(0.6)
    artifact("cap_std", False)
    time.sleep(0.6)
    artifact("wsfs", False, ["{lib}"])
    print(json.dumps({{"reason": "build-finished", "success": True}}))
    sys.exit({exit_code})
    """
)


def build_with_fake_cargo(tmp_path: Path, exit_code: int = 0) -> subprocess.CompletedProcess:
    lib = tmp_path / "libwsfs.so"
    cargo = tmp_path / "cargo"
    cargo.write_text(FAKE_CARGO.format(python=sys.executable, lib=lib, exit_code=exit_code))
    cargo.chmod(0o755)
    return build(dict(os.environ, CARGO=str(cargo), WSFS_BUILD_PROGRESS_SECONDS="0.25"))


def build(env: dict[str, str]) -> subprocess.CompletedProcess:
    code = "import build_libwsfs; print('BUILT', build_libwsfs.build_library())"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO / "python",
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        start_new_session=True,  # no controlling terminal, as under CI: progress goes to stderr
    )


def test_the_build_says_what_it_does_and_how_long_it_takes(tmp_path):
    proc = build_with_fake_cargo(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == f"BUILT {tmp_path / 'libwsfs.so'}"
    lines = [line for line in proc.stderr.splitlines() if line.startswith("wsfs: ")]
    # What happens and roughly how long, before cargo has said anything.
    assert "building libwsfs with cargo" in lines[0] and "minutes" in lines[0], lines
    # While cargo runs: the time so far and the crates compiled, repeatedly.
    ticks = [line for line in lines if "still building" in line]
    assert len(ticks) >= 2, lines
    assert re.search(r"wsfs: \d+ s: still building, 1 crate compiled, 1 reused, last serde", proc.stderr)
    assert re.search(r"still building, 2 crates compiled, 1 reused, last cap_std", proc.stderr)
    assert re.search(r"wsfs: libwsfs built in \d+ s \(3 crates compiled, 1 reused, last wsfs\)", lines[-1])
    # cargo's own messages still reach pip's log.
    assert "Compiling serde v1.0.0" in proc.stderr


def test_a_failed_build_says_so_with_its_duration(tmp_path):
    proc = build_with_fake_cargo(tmp_path, exit_code=101)
    assert proc.returncode != 0
    assert re.search(r"wsfs: cargo build failed after \d+ s", proc.stderr), proc.stderr
    assert "cargo build failed (exit 101)" in proc.stderr


def test_real_cargo_messages_are_read():
    # The stand-in's message shapes are real cargo's: against the checkout make test has
    # built, the build is all reused crates and finds the library.
    if not (REPO / "target" / "release" / LIB).is_file():
        pytest.skip("no target/release/libwsfs.so (run make build)")
    proc = build({k: v for k, v in os.environ.items() if k != "CARGO"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].endswith(f"/release/{LIB}")
    assert re.search(r"wsfs: libwsfs built in \d+ s \(\d+ crates? compiled, \d+ reused", proc.stderr)
