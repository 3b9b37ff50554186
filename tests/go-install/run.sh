#!/usr/bin/env bash
# Follows go/README.md's "Installing" section literally, in a scratch module
# outside the repository: the README's commands (checked to be in the README
# word for word), then its example program, built and run. Then the two
# failures the README promises explain themselves: a checkout whose library
# was not built, and cgo switched off. Needs `make build` first, and the Go
# module proxy (or a module cache that already holds the dependencies).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
readme="$repo/go/README.md"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
fail() { echo "go-install: FAIL: $*" >&2; exit 1; }

# The commands of the README, run as written. The checkout is ../wsfs from
# the module, as in the README's layout.
steps=(
  'export GOTOOLCHAIN=local'
  'go mod edit -require=github.com/wsfs/wsfs/go@v0.0.0 -replace=github.com/wsfs/wsfs/go=../wsfs/go'
  'go get charm.land/fantasy@v0.42.0'
  'go mod tidy'
  'go build ./...'
)
for step in "${steps[@]}"; do
  grep -qF -- "$step" "$readme" || fail "go/README.md no longer says: $step"
done

ln -s "$repo" "$scratch/wsfs"
mkdir "$scratch/myagent"
cd "$scratch/myagent"
GOTOOLCHAIN=local go mod init example.com/myagent 2>/dev/null
# The example program: the first ```go block after the marker.
awk '/<!-- go-install-example -->/ {found=1; next}
     found && /^```go$/ {inside=1; next}
     inside && /^```$/ {exit}
     inside {print}' "$readme" > main.go
[ -s main.go ] || fail "no example program after <!-- go-install-example --> in go/README.md"

for step in "${steps[@]}"; do
  echo "+ $step"
  eval "$step"
done
go build -o myagent .
out="$(./myagent)"
[ "$out" = "Wrote hello.txt. hello from wsfs" ] || fail "the example printed: $out"
grep -q '^	charm.land/fantasy v0.42.0$' go.mod || fail "fantasy is not pinned to v0.42.0 in go.mod: $(cat go.mod)"
echo "go-install: the documented steps build and run the example"

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
echo "go-install: 3 passed, 0 failed"
