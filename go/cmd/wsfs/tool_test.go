package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLI(t, "", args...)
}

// TestToolWorkflow: new makes a tool that loads and passes its own tests;
// a changed module is refused until build writes its hash; run, list and
// test work on the repository's example tools.
func TestToolWorkflow(t *testing.T) {
	dir := t.TempDir()
	if code, _, msg := cli(t, "tool", "new", "greet", "--dir", dir); code != 0 {
		t.Fatalf("new: %d %s", code, msg)
	}
	folder := filepath.Join(dir, "greet")
	if code, out, _ := cli(t, "tool", "test", folder); code != 0 || !strings.Contains(out, "2 passed, 0 failed") {
		t.Fatalf("test of a new tool: %d %s", code, out)
	}
	wat := filepath.Join(folder, "module.wat")
	b, _ := os.ReadFile(wat)
	if err := os.WriteFile(wat, []byte(strings.Replace(string(b), `"{\"received\":}"`, `"{\"recieved\":}"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// A tool that does not load is exit 2 (tool -h), and the message names the fix.
	if code, _, msg := cli(t, "tool", "test", folder); code != 2 || !strings.Contains(msg, "module_mismatch") || !strings.Contains(msg, "wsfs tool build") {
		t.Fatalf("a changed module: %d %s", code, msg)
	}
	if code, _, msg := cli(t, "tool", "build", folder); code != 0 {
		t.Fatalf("build: %d %s", code, msg)
	}
	if code, out, _ := cli(t, "tool", "test", folder); code != 1 || !strings.Contains(out, "want {") {
		t.Fatalf("the rebuilt tool answers differently: %d %s", code, out)
	}
	examples, _ := filepath.Abs("../../../tools")
	for _, name := range []string{"echo", "ask_model", "inventory"} {
		if code, out, msg := cli(t, "tool", "test", filepath.Join(examples, name)); code != 0 {
			t.Errorf("%s: %d %s %s", name, code, out, msg)
		}
	}
	code, out, _ := cli(t, "tool", "run", filepath.Join(examples, "echo"), `{"message":"x"}`, "--json")
	if code != 0 || !strings.Contains(out, `"data":{"received":{"message":"x"}}`) {
		t.Fatalf("run: %d %s", code, out)
	}
	root := t.TempDir()
	code, out, _ = cli(t, "tool", "run", filepath.Join(examples, "inventory"), "--root", root)
	if _, err := os.Stat(filepath.Join(root, "INVENTORY.txt")); code != 0 || err != nil {
		t.Fatalf("run --root: %d %s %v", code, out, err)
	}
	if code, out, msg := cli(t, "tool", "run", filepath.Join(examples, "echo"), `{}`); code != 1 || out != "" || !strings.Contains(msg, "invalid_arguments") {
		t.Fatalf("run with bad arguments: %d %q %s", code, out, msg)
	}
	code, out, _ = cli(t, "--json", "tool", "list", examples)
	if code != 0 || !strings.Contains(out, `"name": "inventory"`) || strings.Contains(out, `"name": "read_file"`) {
		t.Fatalf("list --json: %d %s", code, out)
	}
	code, out, _ = cli(t, "tool", "list", examples)
	if code != 0 || !strings.Contains("\n"+out, "\ninventory  ") || strings.Contains(out, "read_file") {
		t.Fatalf("list: %d %s", code, out)
	}
	if code, _, _ := cli(t, "tool", "frobnicate"); code != 2 {
		t.Fatalf("unknown command: %d", code)
	}
	if code, _, _ := cli(t, "tool", "new", "Bad-Name", "--dir", dir); code != 2 {
		t.Fatalf("bad name: %d", code)
	}
}

// TestToolBuildRust: build --out turns a Rust example (tools/rust/echo) into a
// tool folder that loads and passes its tests, computing the module's hash,
// and leaves the source folder as it is. Skipped without the wasm32-wasip1
// target.
func TestToolBuildRust(t *testing.T) {
	if missing := missingWasmTarget(context.Background()); missing != "" {
		t.Skip(missing)
	}
	src, _ := filepath.Abs("../../../tools/rust/echo")
	before, err := os.ReadFile(filepath.Join(src, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	// cargo's target directory: the repository's target/, so a rerun builds nothing.
	targetDir, _ := filepath.Abs("../../../target/wasm-tools-go")
	t.Setenv("CARGO_TARGET_DIR", targetDir)
	out := filepath.Join(t.TempDir(), "echo")
	if code, _, msg := cli(t, "tool", "build", src, "--out", out); code != 0 {
		t.Fatalf("build --out: %d %s", code, msg)
	}
	if code, res, _ := cli(t, "tool", "test", out); code != 0 || !strings.Contains(res, "3 passed, 0 failed") {
		t.Fatalf("test of the built tool: %d %s", code, res)
	}
	after, _ := os.ReadFile(filepath.Join(src, "manifest.json"))
	if string(after) != string(before) {
		t.Fatal("build --out changed the source manifest")
	}
	if _, err := os.Stat(filepath.Join(src, "module.wasm")); err == nil {
		t.Fatal("build --out wrote module.wasm into the source folder")
	}
}
