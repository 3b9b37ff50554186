"""Builds libwsfs with cargo and bundles it in the wheel as ``wsfs/libwsfs.so``.

The package loads the library with ctypes, so it is a plain C ABI ``cdylib``, not a Python
extension module. A small ``build_py`` step runs the same ``cargo build --release --locked``
as ``make build`` (so a built checkout is reused, not rebuilt) and copies the result in.
setuptools-rust's no-binding mode would instead name it like an extension module
(``_libwsfs.cpython-311-x86_64-linux-gnu.so``), tag the wheel for one CPython version, and
build with ``--crate-type cdylib``, which changes cargo's fingerprint so ``make build`` and
``pip install`` would rebuild the crate in turn. maturin packages extension modules, cffi
or binaries, not a ctypes-loaded library.

A release (``make dist``, scripts/dist.py) builds the wheel from the library ``make build``
made instead: ``WSFS_PREBUILT_LIBRARY`` names it (cargo is not run), and
``WSFS_WHEEL_PLATFORM`` is the wheel's platform tag (``manylinux_2_34_x86_64``: dist.py derives
it from the glibc symbol versions the library needs).

The crate is the repository root (``../Cargo.toml``): build from a wsfs checkout. pip builds
a local directory in place (pip >= 21.3), so ``pip install ./python`` works; an sdist does not.
The cargo build itself, and the progress it reports while it runs, is ``build_libwsfs.py``
(environment variables there).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

# PEP 517 backends do not put the project directory on sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_libwsfs import LIB_NAME, build_library  # noqa: E402


class BuildWithLibrary(build_py):
    """build_py, plus libwsfs.so built by cargo and copied into the package."""

    def run(self) -> None:
        super().run()
        prebuilt = os.environ.get("WSFS_PREBUILT_LIBRARY")
        built = Path(prebuilt) if prebuilt else build_library()
        package_dir = (
            Path(self.get_package_dir("wsfs")) if self.editable_mode else Path(self.build_lib) / "wsfs"
        )
        package_dir.mkdir(parents=True, exist_ok=True)
        target = package_dir / LIB_NAME
        tmp = target.with_name(LIB_NAME + ".tmp")
        shutil.copyfile(built, tmp)
        # The release profile keeps debug info (docs/PERFORMANCE.md profiles use it); the
        # wheel does not need it (28 MB -> a few MB). Without a strip tool it is bundled as is.
        if shutil.which("strip"):
            subprocess.run(["strip", "--strip-debug", str(tmp)], check=False)
        tmp.chmod(0o755)
        os.replace(tmp, target)  # a running process keeps its mapping of the old file

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return super().get_outputs(include_bytecode) + [str(Path(self.build_lib) / "wsfs" / LIB_NAME)]


class NativeDistribution(Distribution):
    """Holds a native library: installed to platlib, in a platform wheel."""

    def has_ext_modules(self) -> bool:
        return True


class PlatformWheel(bdist_wheel):
    """The library is no extension module, so any Python 3 can load it: py3-none-<platform>."""

    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "py3", "none", os.environ.get("WSFS_WHEEL_PLATFORM") or platform


setup(
    distclass=NativeDistribution,
    cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel},
)
