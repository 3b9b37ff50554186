package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpIsOnStdout: every way of asking for help prints it on stdout, exit
// 0, with nothing on stderr and no heading left empty (issue 34).
func TestHelpIsOnStdout(t *testing.T) {
	for _, args := range [][]string{
		{"-h"}, {"--help"}, {"help"}, {"help", "help"},
		{"help", "tools"}, {"tools", "-h"}, {"help", "version"}, {"version", "--help"},
		{"help", "demo"}, {"demo", "-h"},
		{"help", "mcp"}, {"mcp", "-h"}, {"mcp", "--root", "x", "--help"},
		{"help", "tool"}, {"tool", "-h"}, {"tool", "new", "-h"}, {"tool", "test", "--help"},
		{"help", "session"}, {"session", "-h"}, {"session", "diff", "-h"},
		{"help", "audit"}, {"audit", "-h"}, {"audit", "replay", "-h"},
		{"help", "read_file"}, {"read_file", "-h"}, {"-workspace", "x", "list_dir", "--help"},
	} {
		code, out, msg := runCLI(t, "", args...)
		if code != 0 || msg != "" || !strings.HasPrefix(out, "usage:") {
			t.Errorf("%q: exit %d, stdout %.60q, stderr %q", args, code, out, msg)
		}
		if strings.HasSuffix(strings.TrimSpace(out), "flags:") {
			t.Errorf("%q: an empty flags: heading", args)
		}
	}
	if _, out, _ := runCLI(t, "", "help", "read_file"); !strings.Contains(out, `"start_line"`) {
		t.Errorf("help read_file does not show the arguments: %s", out)
	}
	// Usage errors still go to stderr, exit 2, pointing at the help.
	for _, args := range [][]string{{}, {"help", "nope"}, {"nope"}, {"-nope"}, {"tool"}, {"session"}, {"audit"}} {
		code, out, msg := runCLI(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(msg, "-h") && !strings.HasPrefix(msg, "usage:") {
			t.Errorf("%q: exit %d, stdout %.60q, stderr %q", args, code, out, msg)
		}
	}
}

// TestToolRunOutput: flags go before or after the tool; the output is the
// tool's text (an error on stderr, exit 1) unless --json; no message
// doubles its "wsfs:" prefix.
func TestToolRunOutput(t *testing.T) {
	dir := t.TempDir()
	code, out, msg := runCLI(t, "", "write_file", `{"path":"a.txt","content":"hi\n"}`, "-workspace", dir)
	if code != 0 || out != "created a.txt (3 bytes)\n" || msg != "" {
		t.Fatalf("write with -workspace after the tool: exit %d, %q, %q", code, out, msg)
	}
	code, out, _ = runCLI(t, "", "read_file", "-workspace", dir, `{"path":"a.txt"}`, "--json")
	if env := decode(t, out); code != 0 || env.Text != "hi\n" {
		t.Fatalf("read --json: exit %d, %q", code, out)
	}
	code, out, msg = runCLI(t, "", "-workspace", dir, "read_file", `{"path":"../x"}`)
	if code != 1 || out != "" || !strings.HasPrefix(msg, "wsfs read_file: outside_workspace: ") {
		t.Fatalf("an error: exit %d, %q, %q", code, out, msg)
	}
	code, out, _ = runCLI(t, "", "tools")
	if code != 0 || !strings.HasPrefix(out, "read_file ") || strings.Contains(out, `"name"`) ||
		!strings.Contains(out, "\nfind_files        Find files by glob pattern, e.g. ") {
		t.Fatalf("tools: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "wsfs ") || !strings.Contains(out, "(C ABI 1)") {
		t.Fatalf("version: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "", "version", "--json")
	if code != 0 || !strings.Contains(out, `"abi":1`) {
		t.Fatalf("version --json: exit %d, %q", code, out)
	}
	t.Setenv("WORKSPACE_FS_MODE", "bogus")
	code, _, msg = runCLI(t, "", "-workspace", dir, "list_dir")
	if code != 2 || strings.Contains(msg, "wsfs: wsfs:") || !strings.HasPrefix(msg, "wsfs: config: ") {
		t.Fatalf("a bad WORKSPACE_FS_MODE: exit %d, %q", code, msg)
	}
}

// TestToolRunChecksTheEnvironment: every TOOL_* and WORKSPACE_FS_* variable
// is checked by a plain tool run, as by wsfs mcp and wsfs tool run.
func TestToolRunChecksTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	for _, env := range [][2]string{
		{"TOOL_TIMEOUT_SECS", "abc"}, {"TOOL_MEMORY_MB", "-1"}, {"TOOL_RUNTIME", "bogus"},
		{"TOOL_ALLOW_DIRECT_NETWORK", "maybe"}, {"WORKSPACE_FS_SESSION", "s"},
	} {
		t.Run(env[0], func(t *testing.T) {
			t.Setenv(env[0], env[1])
			code, out, msg := runCLI(t, "", "-workspace", dir, "list_dir")
			if code != 2 || out != "" || !strings.Contains(msg, env[0]) {
				t.Fatalf("%s=%s: exit %d, %q, %q", env[0], env[1], code, out, msg)
			}
		})
	}
}

// TestMissingRootIsRefused: a typo'd -workspace is not made silently; the
// message names the resolved path and --create-root, which makes it.
func TestMissingRootIsRefused(t *testing.T) {
	typo := filepath.Join(t.TempDir(), "projcet", "ws")
	code, _, msg := runCLI(t, "", "-workspace", typo, "list_dir")
	if code != 2 || !strings.Contains(msg, typo) || !strings.Contains(msg, "--create-root") || strings.Contains(msg, "wsfs: wsfs:") {
		t.Fatalf("a missing root: exit %d, %q", code, msg)
	}
	if _, err := os.Stat(filepath.Dir(typo)); !os.IsNotExist(err) {
		t.Fatalf("the refused root's parent was made: %v", err)
	}
	if code, out, msg := runCLI(t, "", "-workspace", typo, "--create-root", "list_dir"); code != 0 || msg != "" {
		t.Fatalf("--create-root: exit %d, %q, %q", code, out, msg)
	}
	if st, err := os.Stat(typo); err != nil || !st.IsDir() {
		t.Fatalf("--create-root did not make the root: %v", err)
	}
	var errw strings.Builder
	missing := filepath.Join(t.TempDir(), "nope")
	if code := runMCP(t.Context(), []string{"--root", missing}, &errw, nil); code != 2 || !strings.Contains(errw.String(), "--create-root") {
		t.Fatalf("mcp on a missing root: exit %d, %q", code, errw.String())
	}
}

// TestConfigErrorsPointIntoTheFile: a typo in --config is reported at its
// line and column in the user's file, not in the JSON the CLI rewrote.
func TestConfigErrorsPointIntoTheFile(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "wsfs.json")
	file := "{\n  \"limits\": {\"max_read_bytes\": 7},\n  \"policy\": {\n    \"deny_reed\": [\".env\"]\n  }\n}\n"
	if err := os.WriteFile(cfg, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	var errw strings.Builder
	code := runMCP(t.Context(), []string{"--config", cfg, "--root", root}, &errw, nil)
	if code != 2 || !strings.Contains(errw.String(), cfg+":4:5: ") || !strings.Contains(errw.String(), "deny_reed") ||
		strings.Contains(errw.String(), "at line 1 column") {
		t.Fatalf("exit %d, %q", code, errw.String())
	}
	if err := os.WriteFile(cfg, []byte("{\n  \"limits\": {,}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	errw.Reset()
	if code := runMCP(t.Context(), []string{"--config", cfg, "--root", root}, &errw, nil); code != 2 || !strings.Contains(errw.String(), cfg+":2:14: ") {
		t.Fatalf("a syntax error: exit %d, %q", code, errw.String())
	}
}

// TestToolNew: new makes its --dir, and refuses a built-in tool's name
// (such a tool would never load).
func TestToolNew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools", "mine")
	code, out, msg := runCLI(t, "", "tool", "new", "greet", "--dir", dir)
	if code != 0 || !strings.HasPrefix(out, "made "+filepath.Join(dir, "greet")) {
		t.Fatalf("new in a missing --dir: exit %d, %q, %q", code, out, msg)
	}
	code, _, msg = runCLI(t, "", "tool", "new", "read_file", "--dir", dir)
	if code != 2 || !strings.Contains(msg, "built-in") {
		t.Fatalf("a built-in name: exit %d, %q", code, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "read_file")); !os.IsNotExist(err) {
		t.Fatalf("the refused tool was made: %v", err)
	}
	code, out, _ = runCLI(t, "", "--json", "tool", "test", filepath.Join(dir, "greet"))
	if code != 0 || !strings.Contains(out, `"passed": 2`) {
		t.Fatalf("tool test --json: exit %d, %q", code, out)
	}
	// build checks that what it built loads: a manifest naming a built-in tool does not.
	manifest := filepath.Join(dir, "greet", "manifest.json")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(b), `"name": "greet"`, `"name": "read_file"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, msg := runCLI(t, "", "tool", "build", filepath.Join(dir, "greet")); code != 2 || !strings.Contains(msg, "was built but does not load") {
		t.Fatalf("build of a tool that does not load: exit %d, %q", code, msg)
	}
}
