#!/usr/bin/env bash
# Follows go/README.md's "Installing" section as written, in a scratch home
# directory: the program is saved first, as step 1 says, then the lines of
# the step 2 block (read from the README, so the two cannot drift) run one
# by one, in one shell, in order, with ~/src/wsfs this checkout. Then the
# README's check for a newer fantasy runs in that module. Then the two
# failures the README promises explain themselves: a checkout whose library
# was not built, and cgo switched off. Needs `make build` first (the steps
# run it again, a no-op then), and the Go module proxy or a module cache
# that holds the dependencies.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
readme="$repo/go/README.md"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
fail() { echo "go-install: FAIL: $*" >&2; exit 1; }

# block MARKER LANG: the fenced LANG block right after the line MARKER.
block() {
	awk -v marker="$1" -v open='```'"$2" '
		$0 == marker {found=1; next}
		found && !inside && $0 == open {inside=1; next}
		inside && /^```$/ {exit}
		inside {print}' "$readme"
}
line_of() { grep -nxF -- "$1" "$readme" | head -1 | cut -d: -f1; }

example="$(block '<!-- go-install-example -->' go)"
steps="$(block '<!-- go-install-steps -->' sh)"
check="$(block '<!-- go-install-check -->' sh)"
[ -n "$example" ] || fail "no go block after <!-- go-install-example --> in go/README.md"
[ -n "$steps" ] || fail "no sh block after <!-- go-install-steps --> in go/README.md"
[ -n "$check" ] || fail "no sh block after <!-- go-install-check --> in go/README.md"
# The README must say to write the program before running the commands: on a
# module without code, go mod tidy deletes the requirements again.
[ "$(line_of '<!-- go-install-example -->')" -lt "$(line_of '<!-- go-install-steps -->')" ] ||
	fail "go/README.md shows the commands before the program"

# The README's layout, in a home of its own: ~/src/wsfs is this checkout,
# and the program is in ~/src/myagent. The caches and toolchains stay those
# of the real home.
export GOPATH="$(go env GOPATH)" GOMODCACHE="$(go env GOMODCACHE)" GOCACHE="$(go env GOCACHE)"
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export HOME="$scratch/home"
mkdir -p "$HOME/src/myagent"
ln -s "$repo" "$HOME/src/wsfs"
printf '%s\n' "$example" >"$HOME/src/myagent/main.go"

# Step 2, line by line as written (comments included), in this shell, so
# that cd and export carry over as they do for a reader typing them.
cd "$HOME"
log="$scratch/step.log"
while IFS= read -r step; do
	echo "+ $step"
	eval "$step" >"$log" 2>&1 || fail "'$step' failed: $(cat "$log")"
	cat "$log"
done <<<"$steps"
out="$(cat "$log")"
[ "$(tail -n 1 <<<"$out")" = "Wrote hello.txt. hello from wsfs" ] || fail "the program printed: $out"
[ "$PWD" = "$HOME/src/myagent" ] || fail "the steps ended in $PWD, not ~/src/myagent"
grep -q '^	charm.land/fantasy v0.42.0$' go.mod || fail "fantasy is not pinned to v0.42.0 in go.mod: $(cat go.mod)"
echo "go-install: the documented steps, in the documented order, build and run the example"

# The check for a newer fantasy: wsfs's tests, with this module's versions.
echo "+ $check"
eval "$check" || fail "the README's check for a newer fantasy failed in the example's module"
echo "go-install: wsfs's tests pass with the versions of the example's module"

# A checkout whose library was not built: a copy of the Go module and the
# header, without target/.
mkdir -p "$scratch/unbuilt"
cp -r "$repo/go" "$repo/include" "$scratch/unbuilt/"
go mod edit -replace=github.com/wsfs/wsfs/go="$scratch/unbuilt/go"
if out="$(go build -o /dev/null . 2>&1)"; then fail "built without libwsfs.a"; fi
grep -q "wsfs: target/release/libwsfs.a not found in the wsfs checkout this Go module is in: run 'make build' there first" <<<"$out" ||
	fail "missing libwsfs.a gave: $out"
if out="$(go build -tags wsfs_shared -o /dev/null . 2>&1)"; then fail "built without libwsfs.so"; fi
grep -q "wsfs: target/release/libwsfs.so not found" <<<"$out" || fail "missing libwsfs.so gave: $out"
echo "go-install: a missing library is named, with the command that builds it"

# cgo off: one error, naming the fix.
go mod edit -replace=github.com/wsfs/wsfs/go=../wsfs/go
if out="$(CGO_ENABLED=0 go build -o /dev/null . 2>&1)"; then fail "built with CGO_ENABLED=0"; fi
grep -q "undefined: wsfs_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler__see_go_README_md" <<<"$out" ||
	fail "CGO_ENABLED=0 gave: $out"
[ "$(grep -c 'wsfs/go' <<<"$out")" -le 2 ] || fail "CGO_ENABLED=0 gave more than the one error: $out"
echo "go-install: CGO_ENABLED=0 stops with the one self-explaining error"
echo "go-install: 4 passed, 0 failed"
