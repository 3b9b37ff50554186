"""The package as installed: the bundled library, WSFS_LIB, and the ctypes declarations."""

from __future__ import annotations

import ctypes
import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import wsfs
from wsfs import _native

from conftest import REPO


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != "WSFS_LIB"}
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True)


def test_bundled_library_is_used_without_wsfs_lib():
    proc = run_python("import wsfs; print(wsfs.library_path()); print(wsfs.library_version()['abi'])")
    assert proc.returncode == 0, proc.stderr
    path, abi = proc.stdout.split()
    package_dir = Path(wsfs.__file__).parent
    assert Path(path) == package_dir / "libwsfs.so"
    assert Path(path).is_file() and abi == "1"
    # The tests must run against the installed package, not the source tree (which has no
    # library unless someone built it in place).
    assert package_dir != REPO / "python" / "wsfs" or os.environ.get("WSFS_TEST_SOURCE_TREE")


def test_wsfs_lib_overrides_the_bundled_library(tmp_path):
    built = REPO / "target" / "release" / "libwsfs.so"
    if not built.is_file():
        pytest.skip("no target/release/libwsfs.so (run make build)")
    link = tmp_path / "libwsfs-copy.so"
    link.symlink_to(built)
    code = (
        "import ctypes, wsfs, wsfs._native as n; wsfs.library_version();"
        "print(wsfs.library_path());"
        "print(n._lib._name)"
    )
    proc = run_python(code, WSFS_LIB=str(link))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(link), str(link)]


def test_a_wrong_wsfs_lib_is_a_clear_error(tmp_path):
    proc = run_python("import wsfs; wsfs.Workspace('.')", WSFS_LIB=str(tmp_path / "missing.so"))
    assert proc.returncode != 0
    assert "wsfs.errors.LibraryError" in proc.stderr
    assert "WSFS_LIB" in proc.stderr and "pip install ./python" in proc.stderr


def header_functions() -> dict[str, str]:
    """name -> return type of every function in include/wsfs.h."""
    header = (REPO / "include" / "wsfs.h").read_text()
    return {
        name: ret.strip() for ret, name in re.findall(r"^([a-z_0-9 ]+?\s*\*?)\s*(wsfs_\w+)\(", header, re.M)
    }


def test_every_header_function_has_a_prototype():
    functions = header_functions()
    assert len(functions) == 31, functions
    assert set(functions) == set(_native.PROTOTYPES)
    lib = _native.load()
    for name, ret in functions.items():
        fn = getattr(lib, name)
        argtypes, restype = _native.PROTOTYPES[name]
        assert fn.argtypes == argtypes and fn.restype is restype, name
        if ret.endswith("*"):  # owned strings: a raw pointer, never c_char_p (which leaks)
            assert restype is ctypes.c_void_p, name


def test_versions_agree():
    cargo = (REPO / "Cargo.toml").read_text()
    crate_version = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)
    assert wsfs.library_version()["version"] == crate_version == wsfs.__version__
    assert importlib.metadata.version("wsfs") == crate_version
