#!/usr/bin/env python3
"""The release artifacts of this platform (make dist, make install; docs/install.md).

  dist.py dist OUT        OUT/goproxy (the Go module as a GOPROXY=file:// directory),
                          OUT/python (the wheel), OUT/c (the C install tree), OUT/crates
                          (cargo package's .crate files), OUT/SIZES (each artifact's bytes)
  dist.py install PREFIX  PREFIX/include/wsfs.h, PREFIX/lib/libwsfs.{so*,a},
                          PREFIX/lib/pkgconfig/wsfs.pc

Everything is made from the library make build left in target/release (nothing is compiled
again but the wheel's few Python files). The version is Cargo.toml's [workspace.package]
version; the Go and Python faces must carry the same, or this refuses to release them.

Environment: PYTHON (the Python that builds the wheel: pip and PyPI, or pip's cache, for
setuptools), CARGO.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIB_DIR = REPO / "target" / "release"
GO_MODULE = "github.com/wsfs/wsfs/go"
# The platform this script releases: the only one it can build here.
GO_PLATFORM = "linux-x86_64"
# What a manylinux wheel may need besides glibc's own libraries (PEP 600 / auditwheel's list).
MANYLINUX_LIBS = {
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "libpthread.so.0",
    "librt.so.1",
    "libgcc_s.so.1",
    "ld-linux-x86-64.so.2",
}
# Linker flags a program linking libwsfs.a needs (the Go module's and wsfs.pc's).
STATIC_LIBS = "-ldl -lm -lpthread -lrt -lgcc_s -lc"


def fail(message: str) -> None:
    sys.exit(f"dist: {message}")


def run(*cmd: str | Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def version() -> str:
    """Cargo.toml's [workspace.package] version, after checking every face carries it."""
    cargo = (REPO / "Cargo.toml").read_text()
    section = re.search(r"^\[workspace\.package\]\n(.*?)(?=^\[)", cargo, re.M | re.S)
    found = section and re.search(r'^version = "([^"]+)"', section.group(1), re.M)
    if not found:
        fail("no version in Cargo.toml's [workspace.package]")
    v = found.group(1)
    faces = {
        "go/version.go (PackageVersion)": (r'^const PackageVersion = "([^"]+)"', REPO / "go/version.go"),
        "python/wsfs/__init__.py (__version__)": (r'^__version__ = "([^"]+)"', REPO / "python/wsfs/__init__.py"),
        "include/wsfs.h (WSFS_VERSION)": (r'^#define WSFS_VERSION "([^"]+)"', REPO / "include/wsfs.h"),
        "CHANGELOG.md (its first ## heading)": (r"^## \[?v?([0-9][^\]\s]*)", REPO / "CHANGELOG.md"),
    }
    for face, (pattern, path) in faces.items():
        m = re.search(pattern, path.read_text(), re.M)
        if not m or m.group(1) != v:
            fail(f"{face} says {m.group(1) if m else 'nothing'}, Cargo.toml says {v}: set it to {v}")
    return v


def library(name: str) -> Path:
    path = LIB_DIR / name
    if not path.is_file():
        fail(f"{path} not found: run make build first")
    return path


def stripped(src: Path, dest: Path) -> Path:
    """A copy of src without debug info (symbols stay: a static archive needs them) and without
    the LLVM bitcode rustc embeds in a static library's objects (.llvmbc, .llvmcmd: only a
    linker doing cross-language LTO reads it; it was 60 of libwsfs.a's 102 MB)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    run("strip", "--strip-debug", "--remove-section=.llvmbc", "--remove-section=.llvmcmd", dest)
    return dest


def glibc_needed(so: Path) -> tuple[int, int]:
    """The newest GLIBC_x.y symbol version the library needs (objdump -T)."""
    out = run("objdump", "-T", so, capture_output=True, text=True).stdout
    versions = {tuple(int(p) for p in m.split(".")) for m in re.findall(r"GLIBC_(\d+\.\d+)", out)}
    if not versions:
        fail(f"objdump -T {so} shows no GLIBC_ symbol version")
    return max(versions)


def needed_libs(so: Path) -> set[str]:
    out = run("readelf", "-d", so, capture_output=True, text=True).stdout
    return set(re.findall(r"\(NEEDED\).*\[(.+)\]", out))


def soname(so: Path) -> str:
    out = run("readelf", "-d", so, capture_output=True, text=True).stdout
    m = re.search(r"\(SONAME\).*\[(.+)\]", out)
    if not m:
        fail(f"{so} has no soname (build.rs sets it): run make build")
    return m.group(1)


# ---------------------------------------------------------------------------------------------
# The C install tree


def install(prefix: Path, v: str) -> None:
    """include/wsfs.h, lib/libwsfs.so.X.Y.Z with the soname and libwsfs.so linking to it,
    lib/libwsfs.a, lib/pkgconfig/wsfs.pc (relocatable: its prefix is the .pc file's place)."""
    so = library("libwsfs.so")
    name = soname(so)
    (prefix / "include").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "include/wsfs.h", prefix / "include/wsfs.h")
    lib = prefix / "lib"
    real = stripped(so, lib / f"libwsfs.so.{v}")
    real.chmod(0o755)
    for link in {name, "libwsfs.so"}:
        (lib / link).unlink(missing_ok=True)
        (lib / link).symlink_to(real.name)
    stripped(library("libwsfs.a"), lib / "libwsfs.a")
    pc = lib / "pkgconfig/wsfs.pc"
    pc.parent.mkdir(parents=True, exist_ok=True)
    pc.write_text(
        "# wsfs: filesystem tools for AI agents, confined to one workspace (docs/install.md).\n"
        "# The prefix is where this file lies, so the tree can be moved as a whole.\n"
        "prefix=${pcfiledir}/../..\n"
        "includedir=${prefix}/include\n"
        "libdir=${prefix}/lib\n"
        "\n"
        "Name: wsfs\n"
        "Description: Kernel-confined workspace filesystem tools for AI agents (C ABI)\n"
        f"Version: {v}\n"
        "Cflags: -I${includedir}\n"
        "Libs: -L${libdir} -lwsfs\n"
        f"Libs.private: {STATIC_LIBS}\n"
    )
    print(f"dist: installed wsfs {v} into {prefix} (soname {name})")


# ---------------------------------------------------------------------------------------------
# The Go module, as a module proxy directory

RELEASE_LINK = f"""// wsfs:link begin
// The release's copy of cgo.go (scripts/dist.py wrote these lines): the module carries the
// header and the static library of each platform it supports under build/.
#cgo CFLAGS: -I${{SRCDIR}}/build/include
#cgo linux,amd64 LDFLAGS: ${{SRCDIR}}/build/linux-x86_64/libwsfs.a {STATIC_LIBS}
#if !(defined(__linux__) && defined(__x86_64__))
#  error "wsfs: this release of the Go module holds the library for linux-x86_64 only: on another platform, build wsfs from a checkout (go/README.md, Installing from a checkout)"
#endif
// wsfs:link end"""

# Go files that keep build/'s directories in a `go mod vendor` copy (vendoring copies only
# directories with a package), as wasmtime-go's build/*/empty.go do.
KEEP_DIRS = {
    "build/include": "include",
    f"build/{GO_PLATFORM}": GO_PLATFORM.replace("-", "_"),
}


def go_release_files(v: str, lib_a: Path) -> dict[str, bytes | Path]:
    """The module's files as the release has them: the tracked files of go/ (not the internal
    benchmarks, which link the checkout's library), cgo.go relinked, build/ added."""
    tracked = run("git", "-C", REPO, "ls-files", "-z", "go", capture_output=True).stdout
    files: dict[str, bytes | Path] = {}
    for rel in tracked.decode().split("\0"):
        if not rel or rel.startswith("go/internal/benchmarks/"):
            continue
        path = REPO / rel
        if path.is_file():
            files[rel.removeprefix("go/")] = path
    cgo = (REPO / "go/cgo.go").read_text()
    relinked, n = re.subn(r"// wsfs:link begin\n.*?// wsfs:link end", lambda _: RELEASE_LINK, cgo, flags=re.S)
    if n != 1:
        fail("go/cgo.go must hold exactly one '// wsfs:link begin' ... '// wsfs:link end' block")
    files["cgo.go"] = relinked.encode()
    files["build/include/wsfs.h"] = REPO / "include/wsfs.h"
    files[f"build/{GO_PLATFORM}/libwsfs.a"] = lib_a
    imports = []
    for d, pkg in KEEP_DIRS.items():
        files[f"{d}/empty.go"] = f"// Package {pkg} holds the library files of the release; it has no code.\npackage {pkg}\n".encode()
        imports.append(f'\t_ "{GO_MODULE}/{d}"')
    files["build_keep.go"] = (
        "// Code generated by scripts/dist.py; DO NOT EDIT.\n\n"
        "package wsfs\n\n"
        "// The library's directories, imported so that `go mod vendor` copies them.\n"
        "import (\n" + "\n".join(imports) + "\n)\n"
    ).encode()
    if "go.mod" not in files:
        fail("go/go.mod is not tracked")
    return files


def go_proxy(out: Path, v: str, lib_a: Path) -> Path:
    """OUT/goproxy/<module>/@v/{list, vX.info, vX.mod, vX.zip}: the layout GOPROXY=file://OUT/goproxy reads."""
    tag = f"v{v}"
    files = go_release_files(v, lib_a)
    at_v = out / "goproxy" / GO_MODULE / "@v"
    at_v.mkdir(parents=True, exist_ok=True)
    archive = at_v / f"{tag}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for rel in sorted(files):
            data = files[rel]
            name = f"{GO_MODULE}@{tag}/{rel}"
            if isinstance(data, Path):
                z.write(data, name)
            else:
                z.writestr(name, data)
    mod = files["go.mod"]
    (at_v / f"{tag}.mod").write_bytes(mod.read_bytes() if isinstance(mod, Path) else mod)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))))
    (at_v / f"{tag}.info").write_text(json.dumps({"Version": tag, "Time": stamp}) + "\n")
    (at_v / "list").write_text(tag + "\n")
    print(f"dist: Go module {GO_MODULE}@{tag} in {out / 'goproxy'} ({archive.stat().st_size} B zip)")
    return archive


# ---------------------------------------------------------------------------------------------
# The Python wheel


def wheel(out: Path, so: Path) -> Path:
    """python/ built by pip with the stripped library instead of cargo, tagged manylinux for
    the glibc the library needs."""
    needed = needed_libs(so)
    if needed - MANYLINUX_LIBS:
        fail(f"{so} needs {sorted(needed - MANYLINUX_LIBS)}, which no manylinux tag allows")
    major, minor = glibc_needed(so)
    platform = f"manylinux_{major}_{minor}_x86_64"
    dest = out / "python"
    dest.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, WSFS_PREBUILT_LIBRARY=str(so), WSFS_WHEEL_PLATFORM=platform)
    python = os.environ.get("PYTHON", sys.executable)
    run(python, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
        "-w", dest, REPO / "python", env=env)
    wheels = sorted(dest.glob(f"wsfs-*-py3-none-{platform}.whl"))
    if len(wheels) != 1:
        fail(f"expected one {platform} wheel in {dest}, found {[w.name for w in dest.iterdir()]}")
    print(f"dist: wheel {wheels[0].name} (the library needs glibc {major}.{minor})")
    return wheels[0]


# ---------------------------------------------------------------------------------------------
# The Rust crates


def crates(out: Path, v: str) -> list[Path]:
    """cargo package of every published crate (the workspace's path dependencies resolve
    against the packages being made, cargo's local overlay). Not verified here: the Rust
    artifact test (tests/dist) builds them, from the packages alone. Offline: make build has
    filled cargo's caches, and asking the index again for each crate took 25 s."""
    cargo = os.environ.get("CARGO", "cargo")
    run(cargo, "package", "--workspace", "--exclude", "wsfs-header", "--locked", "--offline",
        "--no-verify", "--allow-dirty", "--quiet", cwd=REPO)
    dest = out / "crates"
    dest.mkdir(parents=True, exist_ok=True)
    made = []
    for name in ("wsfs-sandbox", "wsfs-overlay", "wsfs-core", "wsfs-exec", "wsfs-devtools", "wsfs-wasm", "wsfs"):
        crate = REPO / "target/package" / f"{name}-{v}.crate"
        if not crate.is_file():
            fail(f"cargo package made no {crate}")
        made.append(Path(shutil.copy2(crate, dest / crate.name)))
    print(f"dist: {len(made)} crates in {dest}")
    return made


def dist(out: Path) -> None:
    v = version()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    scratch = out / ".lib"
    lib_a = stripped(library("libwsfs.a"), scratch / "libwsfs.a")
    so = stripped(library("libwsfs.so"), scratch / "libwsfs.so")
    install(out / "c", v)
    artifacts = {
        "go": go_proxy(out, v, lib_a),
        "python": wheel(out, so),
        "c": out / "c",
    }
    for crate in crates(out, v):
        artifacts[f"crate {crate.name}"] = crate
    shutil.rmtree(scratch)
    sizes = []
    for what, path in artifacts.items():
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) if path.is_dir() else path.stat().st_size
        sizes.append(f"{size:>12}  {what}: {path.relative_to(out)}")
    (out / "SIZES").write_text("\n".join(sizes) + "\n")
    print("\n".join(sizes))


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("dist", "install"):
        sys.exit(__doc__)
    target = Path(sys.argv[2]).resolve()
    if sys.argv[1] == "install":
        install(target, version())
    else:
        dist(target)


if __name__ == "__main__":
    main()
