#!/usr/bin/env bash
# Runs README.md's quick starts as written, read from the README so the two cannot drift:
# each example is the fenced block after a `<!-- readme-NAME -->` line. They run in a scratch
# directory that looks like the checkout to them (include/, target/, go/ and python/ are
# links to it), the shell blocks line by line in one shell, and the output a reader is
# promised (the examples' comments) is checked. Needs `make build` and target/venv (the MCP
# Python SDK); the Go example runs inside the Go module, in a folder removed afterwards.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
readme="$repo/README.md"
python="${VENV_PYTHON:-$repo/target/venv/bin/python}"
scratch="$(mktemp -d)"
gomain="$repo/go/_readme_example_$$"
trap 'rm -rf "$scratch" "$gomain"' EXIT
fail() { echo "readme: FAIL: $*" >&2; exit 1; }
pass() { echo "readme: $*"; }

# block NAME: the fenced block right after the line <!-- readme-NAME -->.
block() {
	local got
	got="$(awk -v marker="<!-- readme-$1 -->" '
		$0 == marker {found=1; next}
		found && !inside && /^```/ {inside=1; next}
		inside && /^```$/ {exit}
		inside {print}' "$readme")"
	[ -n "$got" ] || fail "README.md has no fenced block after <!-- readme-$1 -->"
	printf '%s\n' "$got"
}

# run_lines: each line of stdin as a reader types it, in this shell, in $scratch; the
# output of the last line is left in $scratch/last.out.
run_lines() {
	local line
	while IFS= read -r line; do
		echo "+ $line"
		eval "$line" >"$scratch/last.out" 2>&1 || fail "'$line' failed: $(cat "$scratch/last.out")"
		head -n 5 "$scratch/last.out"
	done
}

for link in include target go python; do ln -s "$repo/$link" "$scratch/$link"; done
cd "$scratch"

# C: the program, then its build-and-run lines.
block c >hello.c
run_lines < <(block c-run)
out="$(cat last.out)"
grep -qx 'hi' <<<"$out" || fail "the C example did not print hi: $out"
grep -q '"code":"outside_workspace"' <<<"$out" || fail "the C example's escape was not refused: $out"
pass "the C quick start builds and prints what it says"

# Python: the package from the checkout and the library make build made (pip install ./python
# itself is make test-python-package's).
block python >hello.py
out="$(WSFS_LIB="$repo/target/release/libwsfs.so" PYTHONPATH="$repo/python" "$python" hello.py 2>&1)" ||
	fail "the Python example failed: $out"
[ "$out" = $'hi\noutside_workspace' ] || fail "the Python example printed: $out"
pass "the Python quick start prints what it says"

# Go: a main package inside the module (a folder starting with _ is outside ./...).
mkdir "$gomain"
block go >"$gomain/main.go"
out="$(cd "$repo/go" && go run "./$(basename "$gomain")" 2>&1)" || fail "the Go example failed: $out"
[ "$out" = $'hi\noutside_workspace' ] || fail "the Go example printed: $out"
pass "the Go quick start prints what it says"

# CLI: build, make the workspace, read a file, list the tools; each line must succeed.
cli="$(block cli)"
read_line="$(grep -m1 ' read_file ' <<<"$cli")" || fail "the CLI block has no read_file line"
run_lines <<<"$(grep -v ' tools$' <<<"$cli")"
grep -q 'hi' last.out || fail "'$read_line' did not show the file: $(cat last.out)"
run_lines <<<"$(grep ' tools$' <<<"$cli")"
grep -q 'read_file' last.out || fail "'wsfs tools' did not list read_file: $(cat last.out)"
pass "the CLI quick start runs as written"

# MCP: the mcpServers entry, with this checkout and a scratch root.
mkdir -p mcp-ws
block mcp | "$python" "$repo/tests/readme/mcp_client.py" "$repo" "$scratch/mcp-ws" ||
	fail "the MCP configuration does not serve the tools as documented"
pass "the MCP quick start's configuration serves the tools"
