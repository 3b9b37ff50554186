#!/usr/bin/env bash
# Checks scripts/check-toolchains.sh the way a newcomer meets it: with tools missing from PATH
# or too old, it must name each of them, with how to get it, in one message, and `make test`
# must stop on that message before building anything. Each case runs with PATH set to a
# directory of links to the real tools, less the ones taken away. Fast: nothing is built.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
check="$repo/scripts/check-toolchains.sh"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
passed=0
fail() { echo "toolchains: FAIL: $*" >&2; exit 1; }
pass() { passed=$((passed + 1)); echo "toolchains: ok: $*"; }

go_need=$(awk '$1 == "go" { print $2; exit }' "$repo/go/go.mod")
python_real=$(python3 -c 'import sys; print(sys.executable)')
# What the check and make run: the toolchains, and the utilities the scripts use.
tools=(bash dirname sed awk sort head cat env make git cc gcc go cargo rustc cargo-fmt rustfmt
	cargo-clippy clippy-driver pkg-config strip readelf objdump node npm mktemp mkdir rm unshare mount id)

# path_without NAME... -> a directory of links to every tool above except NAME...
path_without() {
	local dir="$scratch/bin-$RANDOM$RANDOM" tool skip
	mkdir "$dir"
	for tool in "${tools[@]}" python3; do
		for skip in "$@"; do [ "$tool" = "$skip" ] && continue 2; done
		if [ "$tool" = python3 ]; then
			ln -s "$python_real" "$dir/python3" # the interpreter itself, not a pyenv shim
		elif command -v "$tool" >/dev/null 2>&1; then
			ln -s "$(command -v "$tool")" "$dir/$tool"
		fi
	done
	echo "$dir"
}

# run_check PATH GOAL -> sets $out (stdout and stderr) and $rc
run_check() {
	rc=0
	out=$(env -u CARGO -u GO -u PYTHON PATH="$1" HOME="$HOME" "$check" "$2" 2>&1) || rc=$?
}

run_check "$(path_without)" test
[ "$rc" = 0 ] || fail "with every tool on PATH the check failed: $out"
grep -q "^toolchains: rustc .*, go.*, Python .*, node " <<<"$out" || fail "no versions line: $out"
grep -q "^make test skips here:" <<<"$out" && grep -qF "make test-wasmtime" <<<"$out" ||
	fail "the check does not say what make test skips: $out"
pass "everything present, and what make test skips is said: $out"

run_check "$(path_without node npm)" test
[ "$rc" = 1 ] && grep -qF "Node.js 20.19 or later with npm" <<<"$out" && grep -qF "https://nodejs.org" <<<"$out" ||
	fail "without node the check did not name it with where to get it ($rc): $out"
pass "node missing is named with its version and where to get it"

run_check "$(path_without npm)" test
[ "$rc" = 1 ] && grep -qF "npm, Node's package manager" <<<"$out" || fail "without npm the check did not name it ($rc): $out"
pass "npm missing is named"

run_check "$(path_without node npm)" run
[ "$rc" = 0 ] || fail "make run's check wants node: $out"
pass "make run does not need node"

run_check "$(path_without go)" test
[ "$rc" = 1 ] || fail "without go the check exited $rc: $out"
grep -qF "Go $go_need or later" <<<"$out" || fail "without go the message does not name Go $go_need: $out"
grep -qF "https://go.dev/doc/install" <<<"$out" || fail "without go the message does not say where to get it: $out"
pass "go missing is named with its version and where to get it"

run_check "$(path_without go cc gcc)" test
[ "$rc" = 1 ] || fail "without go and cc the check exited $rc: $out"
[ "$(grep -c "needs toolchains that are missing" <<<"$out")" = 1 ] || fail "not one message: $out"
grep -qF "Go $go_need or later" <<<"$out" && grep -qF "a C compiler as 'cc'" <<<"$out" ||
	fail "without go and cc the one message does not name both: $out"
pass "two missing tools are named in one message"

run_check "$(path_without pkg-config)" test
[ "$rc" = 1 ] && grep -qF "pkg-config (make dist and make test-dist use it)" <<<"$out" || fail "a missing pkg-config was not named: $out"
pass "pkg-config missing is named with the package that brings it"

old_go="$(path_without go)"
printf '#!/bin/sh\n[ "$2" = GOVERSION ] && echo go1.20.3 || echo gcc\n' >"$old_go/go"
chmod +x "$old_go/go"
run_check "$old_go" test
[ "$rc" = 1 ] && grep -qF "found go1.20.3" <<<"$out" || fail "an old go was not named: $out"
pass "an old go is named with the version found"

# Debian's python3 without python3-venv: ensurepip cannot be imported.
no_venv="$(path_without python3)"
mkdir -p "$scratch/no-ensurepip/ensurepip"
echo 'raise ImportError("ensurepip is not installed")' >"$scratch/no-ensurepip/ensurepip/__init__.py"
printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$scratch/no-ensurepip" "$python_real" >"$no_venv/python3"
chmod +x "$no_venv/python3"
run_check "$no_venv" test
[ "$rc" = 1 ] && grep -qF "apt-get install python3-venv" <<<"$out" || fail "a python without venv was not named: $out"
pass "a python without venv is named with the package that brings it"

# make run needs neither Python nor git.
run_check "$(path_without python3 git)" run
[ "$rc" = 0 ] || fail "make run's check wants more than Rust, Go and a C compiler: $out"
pass "make run's check asks only for what make run uses"

# make test stops on the message before building anything: run in a copy of what the check
# reads (the working tree's, so an uncommitted Makefile is what is tested), which has nowhere
# to build anyway, so that nothing here touches the repository's target/.
mkdir -p "$scratch/clone/go" "$scratch/clone/python"
cp -r "$repo/Makefile" "$repo/Cargo.toml" "$repo/scripts" "$scratch/clone/"
cp "$repo/go/go.mod" "$scratch/clone/go/"
cp "$repo/python/pyproject.toml" "$scratch/clone/python/"
rc=0
out=$(env -u CARGO -u GO -u PYTHON PATH="$(path_without go)" make -C "$scratch/clone" test 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "make test passed without go"
grep -qF "Go $go_need or later" <<<"$out" || fail "make test without go did not name it: $out"
! grep -qE "cargo|Compiling|venv" <<<"$(grep -v '^  - ' <<<"$out")" || fail "make test ran something before the check: $out"
[ ! -e "$scratch/clone/target" ] || fail "make test without go created target/"
pass "make test without go stops on the message, before any build"

# README.md's "Building and testing" states the versions this check requires.
python_need=$(sed -n 's/^requires-python *= *">=\([0-9.]*\)".*/\1/p' "$repo/python/pyproject.toml")
building=$(sed -n '/^## Building and testing/,/^## /p' "$repo/README.md")
grep -qF "Go $go_need+" <<<"$building" && grep -qF "Python $python_need+" <<<"$building" &&
	grep -qF "Node.js 20.19+ with npm" <<<"$building" ||
	fail "README.md's Building and testing does not say Go $go_need+, Python $python_need+ and Node.js 20.19+ with npm"
pass "README.md states the versions the check requires"

echo "toolchains: $passed passed, 0 failed"
