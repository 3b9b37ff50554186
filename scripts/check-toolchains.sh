#!/usr/bin/env bash
# scripts/check-toolchains.sh [run|test]
#
# Run by make before anything is built (make run: `run`, make test and the rest: `test`).
# Checks that every toolchain the goal needs is installed and recent enough, and if not, prints
# ONE message listing everything missing and how to get it, then exits 1: a newcomer learns
# all of it at once, not one failure per 10-minute build. On success prints one line of
# versions.
#
# The versions required are read from where the project states them, so this cannot fall
# behind: Cargo.toml's rust-version, go/go.mod's go line, python/pyproject.toml's
# requires-python. The commands are $CARGO, $GO and $PYTHON when set (as make passes them).
# Go is asked with GOTOOLCHAIN=local: make never lets go download a newer toolchain.
#
# tests/toolchains/run.sh checks this script with tools taken off PATH.
set -uo pipefail

goal=${1:-test}
case $goal in
run | test) ;;
*)
	echo "usage: scripts/check-toolchains.sh [run|test]" >&2
	exit 2
	;;
esac
cd "$(dirname "$0")/.." || exit 2

CARGO=${CARGO:-cargo}
GO=${GO:-go}
PYTHON=${PYTHON:-python3}

# version_at_least HAVE NEED: true when HAVE >= NEED (dotted numbers).
version_at_least() {
	[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

rust_need=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml)
go_need=$(awk '$1 == "go" { print $2; exit }' go/go.mod)
python_need=$(sed -n 's/^requires-python *= *">=\([0-9.]*\)".*/\1/p' python/pyproject.toml)

missing=()
found=()

# Rust: cargo and rustc, recent enough; make test also lints with rustfmt and clippy.
if ! command -v "$CARGO" >/dev/null 2>&1; then
	if [ -x "$HOME/.cargo/bin/cargo" ]; then
		missing+=("Rust: cargo is in ~/.cargo/bin but not on PATH: run 'source ~/.cargo/env' (or open a new shell)")
	else
		missing+=("Rust $rust_need or later (cargo, rustc): install it with rustup, https://rustup.rs")
	fi
else
	rustc_version=$(rustc --version 2>/dev/null | awk '{ print $2 }')
	if [ -z "$rustc_version" ]; then
		missing+=("Rust: cargo is there but rustc does not run: 'rustup default stable' (https://rustup.rs)")
	elif ! version_at_least "${rustc_version%%-*}" "$rust_need"; then
		missing+=("Rust $rust_need or later (Cargo.toml's rust-version), found rustc $rustc_version: 'rustup update stable'")
	else
		found+=("rustc $rustc_version")
	fi
	if [ "$goal" = test ]; then
		lint_tools=()
		"$CARGO" fmt --version >/dev/null 2>&1 || lint_tools+=(rustfmt)
		"$CARGO" clippy --version >/dev/null 2>&1 || lint_tools+=(clippy)
		if ((${#lint_tools[@]})); then
			missing+=("Rust's ${lint_tools[*]} (make test lints with them): 'rustup component add ${lint_tools[*]}'")
		fi
	fi
fi

# Go, recent enough without downloading a toolchain; cgo needs Go's C compiler.
if ! command -v "$GO" >/dev/null 2>&1; then
	missing+=("Go $go_need or later (go/go.mod's go line): https://go.dev/doc/install (distribution packages are often older)")
else
	go_version=$(GOTOOLCHAIN=local "$GO" env GOVERSION 2>/dev/null)
	go_number=${go_version#go}
	go_number=${go_number%%[!0-9.]*}
	if [ -z "$go_number" ] || ! version_at_least "$go_number" "$go_need"; then
		missing+=("Go $go_need or later (go/go.mod's go line), found ${go_version:-a go that does not run}: https://go.dev/doc/install (make runs go with GOTOOLCHAIN=local, so go does not download a newer one)")
	else
		found+=("$go_version")
	fi
	go_cc=$(GOTOOLCHAIN=local "$GO" env CC 2>/dev/null)
	go_cc=${go_cc%% *}
	if [ -n "$go_cc" ] && ! command -v "$go_cc" >/dev/null 2>&1; then
		missing+=("$go_cc, the C compiler cgo uses (go env CC): 'apt-get install gcc' on Debian/Ubuntu, or set CC to your compiler")
	fi
fi

if [ "$goal" = test ]; then
	# A C compiler for the C example, whatever go uses.
	if ! command -v cc >/dev/null 2>&1; then
		missing+=("a C compiler as 'cc' (the C example is built with it): 'apt-get install gcc' on Debian/Ubuntu")
	fi

	# Python, recent enough, with venv: the test dependencies go into target/venv.
	if ! command -v "$PYTHON" >/dev/null 2>&1; then
		missing+=("Python $python_need or later as '$PYTHON' (with venv): 'apt-get install python3 python3-venv' on Debian/Ubuntu, or https://www.python.org/downloads/")
	else
		python_version=$("$PYTHON" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)
		if [ -z "$python_version" ] || ! version_at_least "$python_version" "$python_need"; then
			missing+=("Python $python_need or later (python/pyproject.toml's requires-python), found '$PYTHON' ${python_version:-that does not run}: https://www.python.org/downloads/")
		elif ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
			missing+=("Python's venv module with ensurepip ('$PYTHON -m venv' fails; make test puts its Python test dependencies in target/venv): 'apt-get install python3-venv' on Debian/Ubuntu")
		else
			found+=("Python $python_version")
		fi
	fi

	# make test compares the generated header with the committed one.
	command -v git >/dev/null 2>&1 || missing+=("git (make test checks the committed header with it): 'apt-get install git' on Debian/Ubuntu")
	# make dist strips and inspects the library (binutils); make test-dist builds a C program
	# with pkg-config, as the install tree's users do.
	for tool in pkg-config strip readelf objdump; do
		command -v "$tool" >/dev/null 2>&1 || missing+=("$tool (make dist and make test-dist use it): 'apt-get install pkg-config binutils' on Debian/Ubuntu")
	done

	# Node and npm: make test installs eslint, typescript and pyright (tests/devtools/package-lock.json)
	# into target/devtools-node with npm ci, for the developer tools' tests. The version is the
	# least eslint's engines accept (package-lock.json).
	node_need=20.19
	node_get="https://nodejs.org/en/download (or 'apt-get install nodejs npm' where the distribution's is recent enough)"
	if ! command -v node >/dev/null 2>&1; then
		missing+=("Node.js $node_need or later with npm (make test installs eslint, typescript and pyright with npm ci for the developer tools' tests): $node_get")
	else
		node_version=$(node --version 2>/dev/null)
		node_version=${node_version#v}
		if [ -z "$node_version" ] || ! version_at_least "$node_version" "$node_need"; then
			missing+=("Node.js $node_need or later (eslint's engines), found node ${node_version:-that does not run}: $node_get")
		elif ! command -v npm >/dev/null 2>&1; then
			missing+=("npm, Node's package manager (make test runs npm ci for eslint, typescript and pyright): 'apt-get install npm' on Debian/Ubuntu, or $node_get")
		else
			found+=("node $node_version")
		fi
	fi
fi

command -v make >/dev/null 2>&1 || missing+=("make: 'apt-get install make' on Debian/Ubuntu")

if ((${#missing[@]})); then
	{
		echo "make $goal needs toolchains that are missing or too old; install these, then run make again:"
		printf '  - %s\n' "${missing[@]}"
	} >&2
	exit 1
fi
echo "toolchains: $(IFS=,; echo "${found[*]}" | sed 's/,/, /g')"

# What make test leaves out on this machine, and why, said before anything is built (the tests
# themselves only say SKIPPED deep in their output).
if [ "$goal" = test ]; then
	skips=()
	sysroot=$(rustc --print sysroot 2>/dev/null)
	if [ ! -d "$sysroot/lib/rustlib/wasm32-wasip1/lib" ]; then
		skips+=("building the Rust Wasm tools (tools/rust): the wasm32-wasip1 target is not installed ('rustup target add wasm32-wasip1')")
	fi
	scratch=$(mktemp -d)
	mkdir -p "$scratch/lower" "$scratch/upper" "$scratch/work" "$scratch/merged"
	if ! unshare -Urm mount -t overlay overlay -o "lowerdir=$scratch/lower,upperdir=$scratch/upper,workdir=$scratch/work" "$scratch/merged" >/dev/null 2>&1; then
		skips+=("the overlay session tests: this kernel refuses an overlay mount in a user namespace (Linux 5.11 or later allows it)")
	fi
	rm -rf "$scratch"
	if [ "$(id -u)" != 0 ]; then
		skips+=("the few tests that mount a tmpfs: they need root")
	fi
	skips+=("the wasmtime engine: make test builds the default wasmi one; make test-wasmtime tests wasmtime")
	echo "make test skips here:"
	printf '  - %s\n' "${skips[@]}"
fi
