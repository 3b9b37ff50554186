#!/usr/bin/env bash
# The release artifacts (make dist) used as a user uses them, each in a scratch home, from a
# copy of dist/ there: nothing below is given a path into the checkout, and no Rust toolchain
# is on PATH but for the Rust test, which needs cargo.
#   go      go get the module from the module proxy directory, build a fantasy agent that runs
#           the five default tools (scripted model), run it;
#   python  pip install the wheel into a fresh venv (no index), run python/README.md's quick
#           start;
#   c       build a C program with `pkg-config --cflags --libs wsfs` against the install tree,
#           run it;
#   rust    a cargo project that depends on wsfs = "X" with [patch] to the unpacked .crate
#           files (every crate built from its package alone), run it.
# Each prints the seconds from its clean scratch home to its program's first tool call's
# result. Usage: tests/dist/run.sh DIST [go|python|c|rust ...]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
dist_in="$(cd "${1:?usage: tests/dist/run.sh DIST [go|python|c|rust ...]}" && pwd)"
shift
tests=(go python c rust)
[ $# -eq 0 ] || tests=("$@")
fail() { echo "dist: FAIL: $*" >&2; exit 1; }

version="$(sed -n 's/^#define WSFS_VERSION "\(.*\)"$/\1/p' "$dist_in/c/include/wsfs.h")"
[ -n "$version" ] || fail "dist/c/include/wsfs.h has no WSFS_VERSION"

# What the tests take from this machine, found before PATH is narrowed.
real_go="$(command -v go)"
real_python="$(python3 -c 'import sys; print(sys.executable)')"
real_cargo="$(command -v cargo)"
real_gocache="$(go env GOCACHE)"
real_modcache="$(go env GOMODCACHE)"
real_goproxy="$(go env GOPROXY)"
real_cargo_home="${CARGO_HOME:-$HOME/.cargo}"
real_rustup_home="${RUSTUP_HOME:-$HOME/.rustup}"

scratch="$(mktemp -d)"
cleanup() { chmod -R u+w "$scratch" 2>/dev/null || true; rm -rf "$scratch"; }
trap cleanup EXIT
cp -r "$dist_in" "$scratch/dist"
dist="$scratch/dist"

# A PATH of the system's directories and the tools named here only: go, python3, cc and
# pkg-config, never cargo or rustc (they live in ~/.cargo/bin; /usr/bin has none, checked).
mkdir -p "$scratch/bin"
ln -s "$real_go" "$scratch/bin/go"
ln -s "$real_python" "$scratch/bin/python3"
export PATH="$scratch/bin:/usr/bin:/bin"
! command -v cargo >/dev/null && ! command -v rustc >/dev/null || fail "a Rust toolchain is on the scratch PATH"
unset CARGO RUSTC WSFS_LIB PYTHONPATH CGO_CFLAGS CGO_LDFLAGS GOFLAGS PKG_CONFIG_PATH LD_LIBRARY_PATH

# fresh_home NAME: a new, empty home directory, made the current one.
fresh_home() {
	export HOME="$scratch/home-$1"
	mkdir -p "$HOME"
	cd "$HOME"
}
since() { echo $((($(date +%s%N) - $1) / 1000000)); }

test_go() {
	fresh_home go
	local start
	start=$(date +%s%N)
	# A module cache of its own (the release's zip must be the one unpacked), filled from the
	# proxy directory, then from this machine's download cache and the Go proxy; the build
	# cache is shared (content-addressed: a stale entry cannot be used).
	export GOPATH="$HOME/go" GOMODCACHE="$HOME/go/pkg/mod" GOCACHE="$real_gocache"
	export GOPROXY="file://$dist/goproxy,file://$real_modcache/cache/download,$real_goproxy"
	export GONOSUMDB=github.com/wsfs/wsfs GOFLAGS=-mod=mod GOTOOLCHAIN=local
	mkdir myagent && cd myagent
	cat >main.go <<'EOF'
package main

import (
	"context"
	"fmt"
	"log"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/agent"
	"github.com/wsfs/wsfs/go/fantasytools"
	"github.com/wsfs/wsfs/go/scripted"
)

func main() {
	ctx := context.Background()
	ws, err := wsfs.Open(wsfs.Config{Root: "agent-workspace", CreateRoot: true})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	v, err := wsfs.Version()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("library", v.Version, "package", wsfs.PackageVersion)
	model := scripted.New(
		scripted.Use(scripted.Call("write_file", `{"path":"notes/todo.md","content":"- buy milk\n"}`)),
		scripted.Use(scripted.Call("append_file", `{"path":"notes/todo.md","content":"- call Bob\n"}`)),
		scripted.Use(scripted.Call("edit_file", `{"path":"notes/todo.md","old_text":"milk","new_text":"oat milk"}`)),
		scripted.Use(scripted.Call("list_dir", `{"path":"notes"}`)),
		scripted.Use(scripted.Call("read_file", `{"path":"../../etc/passwd"}`)),
		scripted.Use(scripted.Call("read_file", `{"path":"notes/todo.md"}`)),
		scripted.Say("done"),
	)
	a := fantasy.NewAgent(model, fantasy.WithTools(fantasytools.Tools(ws, fantasytools.WithToolNames(agent.DefaultTools...))...))
	res, err := a.Generate(ctx, fantasy.AgentCall{Prompt: "keep my list"})
	if err != nil {
		log.Fatal(err)
	}
	for _, step := range res.Steps {
		for _, r := range step.Content.ToolResults() {
			fmt.Printf("%s: %s\n", r.ToolName, scripted.ResultText(r.Result))
		}
	}
	fmt.Println("answer:", res.Response.Content.Text())
}
EOF
	go mod init example.com/myagent >/dev/null 2>&1
	go get "github.com/wsfs/wsfs/go@v$version" >"$scratch/go.log" 2>&1 || fail "go get: $(cat "$scratch/go.log")"
	go mod tidy >"$scratch/go.log" 2>&1 || fail "go mod tidy: $(cat "$scratch/go.log")"
	grep -q "^	charm.land/fantasy v0.42.0$" go.mod || fail "fantasy is not v0.42.0 in go.mod: $(cat go.mod)"
	go build -o myagent . >"$scratch/go.log" 2>&1 || fail "go build: $(cat "$scratch/go.log")"
	local out
	out="$(./myagent 2>&1)" || fail "the Go program failed: $out"
	echo "go: $(since "$start") ms from a clean home to the program's first tool call's result"
	grep -qx "library $version package $version" <<<"$out" || fail "go: versions: $out"
	for tool in write_file append_file edit_file list_dir read_file; do
		grep -q "^$tool: " <<<"$out" || fail "go: no $tool result in: $out"
	done
	grep -q "outside_workspace" <<<"$out" || fail "go: ../../etc/passwd was not refused: $out"
	grep -q "oat milk" <<<"$out" || fail "go: read_file did not show the edit: $out"
	[ "$(cat agent-workspace/notes/todo.md)" = $'- buy oat milk\n- call Bob' ] || fail "go: the file holds $(cat agent-workspace/notes/todo.md)"
	ldd myagent | grep -q libwsfs && fail "go: the binary needs a shared libwsfs: $(ldd myagent)"
	go list -m -f '{{.Dir}}' github.com/wsfs/wsfs/go | grep -q "^$GOMODCACHE/" || fail "go: the module is not the module cache's"
	echo "go: go get from the proxy directory, a fantasy agent ran the five tools: ok"
	go clean -modcache
}

test_python() {
	fresh_home python
	local start
	start=$(date +%s%N)
	local wheel
	wheel="$(ls "$dist"/python/wsfs-"$version"-py3-none-manylinux_*_x86_64.whl)"
	python3 -m venv venv
	venv/bin/pip install --quiet --disable-pip-version-check --no-index "$wheel" >"$scratch/pip.log" 2>&1 ||
		fail "pip install $(basename "$wheel"): $(cat "$scratch/pip.log")"
	# python/README.md's quick start, as written.
	awk '/^## Quick start/ {q=1} q && /^```python$/ {p=1; next} p && /^```$/ {exit} p {print}' "$repo/python/README.md" >quickstart.py
	[ -s quickstart.py ] || fail "python: no python block under python/README.md's Quick start"
	local out
	out="$(venv/bin/python quickstart.py 2>&1)" || fail "python: the quick start failed: $out"
	echo "python: $(since "$start") ms from a clean home to the quick start's tool calls' results"
	grep -qx -- "- buy milk" <<<"$out" || fail "python: read_file: $out"
	grep -q "DirEntry(name='todo.md', type='file', size=26)" <<<"$out" || fail "python: list_dir: $out"
	grep -q "^outside_workspace " <<<"$out" || fail "python: ../../etc/passwd was not refused: $out"
	grep -q "oat milk" "$HOME/agent-workspace/notes/todo.md" || fail "python: edit_file did not edit"
	out="$(venv/bin/python -c 'import wsfs; print(wsfs.__version__, wsfs.library_version()["version"], wsfs.library_path())')"
	[[ "$out" == "$version $version $HOME/venv/lib/"*"/site-packages/wsfs/libwsfs.so" ]] || fail "python: version and library: $out"
	echo "python: pip install of the wheel (no Rust, no index), the quick start: ok"
}

test_c() {
	fresh_home c
	local start
	start=$(date +%s%N)
	cp -r "$dist/c" prefix # the tree is relocatable: wsfs.pc's prefix is its own place
	export PKG_CONFIG_PATH="$HOME/prefix/lib/pkgconfig"
	[ "$(pkg-config --modversion wsfs)" = "$version" ] || fail "c: pkg-config --modversion wsfs: $(pkg-config --modversion wsfs)"
	cat >tools.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wsfs.h>

static void call(uint64_t ws, const char *tool, const char *args) {
    char *r = wsfs_call(ws, tool, args);
    printf("%s: %s\n", tool, r);
    wsfs_string_free(r);
}

int main(void) {
    char *v = wsfs_version();
    printf("header %s abi %d library %s\n", WSFS_VERSION, WSFS_ABI_VERSION, v);
    wsfs_string_free(v);
    char *opened = wsfs_workspace_open("{\"root\": \"agent-workspace\", \"create_root\": true}");
    const char *id = strstr(opened, "\"workspace\":");
    uint64_t ws = id ? strtoull(id + strlen("\"workspace\":"), NULL, 10) : 0;
    wsfs_string_free(opened);
    call(ws, "write_file", "{\"path\": \"notes/todo.md\", \"content\": \"- buy milk\\n\"}");
    call(ws, "append_file", "{\"path\": \"notes/todo.md\", \"content\": \"- call Bob\\n\"}");
    call(ws, "edit_file", "{\"path\": \"notes/todo.md\", \"old_text\": \"milk\", \"new_text\": \"oat milk\"}");
    call(ws, "list_dir", "{\"path\": \"notes\"}");
    call(ws, "read_file", "{\"path\": \"notes/todo.md\"}");
    call(ws, "read_file", "{\"path\": \"../../etc/passwd\"}");
    wsfs_string_free(wsfs_workspace_close(ws));
    return 0;
}
EOF
	# shellcheck disable=SC2046 # pkg-config's output is words
	cc -Wall -Werror tools.c $(pkg-config --cflags --libs wsfs) -o tools >"$scratch/cc.log" 2>&1 || fail "c: cc: $(cat "$scratch/cc.log")"
	local out
	out="$(LD_LIBRARY_PATH="$HOME/prefix/lib" ./tools 2>&1)" || fail "c: the program failed: $out"
	echo "c: $(since "$start") ms from a clean home to the program's first tool call's result"
	grep -qx "header $version abi 1 library {\"version\":\"$version\",\"abi\":1}" <<<"$out" || fail "c: versions: $out"
	for tool in write_file append_file edit_file list_dir; do
		grep -q "^$tool: {\"ok\":true" <<<"$out" || fail "c: $tool did not succeed: $out"
	done
	grep -q '^read_file: {"ok":true.*oat milk' <<<"$out" || fail "c: read_file did not show the edit: $out"
	grep -q '^read_file: {"ok":false,"error":{"code":"outside_workspace"' <<<"$out" || fail "c: ../../etc/passwd was not refused: $out"
	local needed
	needed="$(readelf -d tools | sed -n 's/.*(NEEDED).*\[\(libwsfs.*\)\]/\1/p')"
	[ "$needed" = "$(readelf -d prefix/lib/libwsfs.so | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" ] && [ -n "$needed" ] ||
		fail "c: the program needs '$needed', not the library's soname"
	echo "c: a program built with pkg-config --cflags --libs wsfs against the install tree ($needed): ok"
}

test_rust() {
	fresh_home rust
	local start
	start=$(date +%s%N)
	# cargo and its registry cache are this machine's; the crates' build directory persists in
	# the checkout's target/ (a cache only: the crates come from the packages unpacked here).
	export CARGO_HOME="$real_cargo_home" RUSTUP_HOME="$real_rustup_home"
	export CARGO_TARGET_DIR="$repo/target/dist-rust"
	mkdir crates
	for crate in "$dist"/crates/*.crate; do tar -xzf "$crate" -C crates; done
	local patch=""
	for dir in crates/*/; do
		local name
		name="$(basename "$dir")"
		name="${name%-"$version"}"
		patch+="$name = { path = \"crates/$name-$version\" }"$'\n'
	done
	mkdir -p myagent/src
	cat >myagent/Cargo.toml <<EOF
[package]
name = "myagent"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
wsfs = { version = "$version", features = ["full"] }
serde_json = "1"

[patch.crates-io]
$patch
[workspace]
EOF
	sed -i 's|path = "crates/|path = "../crates/|' myagent/Cargo.toml
	cat >myagent/src/main.rs <<'EOF'
use serde_json::Value;

fn main() {
    let opened: Value = serde_json::from_str(&wsfs::api::workspace_open(r#"{"root": "agent-workspace", "create_root": true}"#)).unwrap();
    let ws = opened["data"]["workspace"].as_u64().expect("a workspace id");
    for (tool, args) in [
        ("write_file", r#"{"path": "notes/todo.md", "content": "- buy milk\n"}"#),
        ("append_file", r#"{"path": "notes/todo.md", "content": "- call Bob\n"}"#),
        ("edit_file", r#"{"path": "notes/todo.md", "old_text": "milk", "new_text": "oat milk"}"#),
        ("list_dir", r#"{"path": "notes"}"#),
        ("read_file", r#"{"path": "notes/todo.md"}"#),
        ("read_file", r#"{"path": "../../etc/passwd"}"#),
    ] {
        println!("{tool}: {}", wsfs::api::call(ws, tool, args, None, None));
    }
    println!("version: {}", wsfs::api::version());
    wsfs::api::workspace_close(ws);
}
EOF
	(cd myagent && PATH="$(dirname "$real_cargo"):$PATH" cargo build --offline --quiet) >"$scratch/cargo.log" 2>&1 ||
		fail "rust: cargo build on the packaged crates: $(cat "$scratch/cargo.log")"
	local out
	out="$("$CARGO_TARGET_DIR/debug/myagent" 2>&1)" || fail "rust: the program failed: $out"
	echo "rust: $(since "$start") ms from a clean home to the program's first tool call's result"
	for tool in write_file append_file edit_file list_dir; do
		grep -q "^$tool: {\"ok\":true" <<<"$out" || fail "rust: $tool did not succeed: $out"
	done
	grep -q '^read_file: {"ok":true.*oat milk' <<<"$out" || fail "rust: read_file did not show the edit: $out"
	grep -q '^read_file: {"ok":false,"error":{"code":"outside_workspace"' <<<"$out" || fail "rust: ../../etc/passwd was not refused: $out"
	grep -qx "version: {\"version\":\"$version\",\"abi\":1}" <<<"$out" || fail "rust: version: $out"
	grep -q "$HOME/crates/wsfs-core-$version" <<<"$(cd myagent && PATH="$(dirname "$real_cargo"):$PATH" cargo metadata --offline --format-version 1)" ||
		fail "rust: wsfs-core is not the unpacked package"
	echo "rust: wsfs = \"$version\" from the packaged crates, every feature, ran the five tools: ok"
}

for t in "${tests[@]}"; do
	case "$t" in
	go | python | c | rust) "test_$t" ;;
	*) fail "unknown test $t (go, python, c, rust)" ;;
	esac
done
echo "dist: ${#tests[@]} passed, 0 failed"
