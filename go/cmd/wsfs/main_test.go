package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/mcpserver"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errw strings.Builder
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errw)
	return code, out.String(), errw.String()
}

type envelope struct {
	OK    bool            `json:"ok"`
	Data  json.RawMessage `json:"data"`
	Text  string          `json:"text"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func decode(t *testing.T, s string) envelope {
	t.Helper()
	var env envelope
	if err := json.Unmarshal([]byte(s), &env); err != nil {
		t.Fatalf("output %q is not an envelope: %v", s, err)
	}
	return env
}

func TestTools(t *testing.T) {
	code, out, _ := runCLI(t, "", "tools", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var specs []struct{ Name string }
	if err := json.Unmarshal([]byte(out), &specs); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "read_file,write_file,append_file,list_dir,edit_file,get_path_info,find_files,search_text,apply_patch,create_directory,move_file,delete_file,"+
		"workspace_info,git_status,git_diff,git_commit,run_tests,run_lint,typecheck,safe_shell,shell" || strings.Join(names, ",") != strings.Join(wsfs.ToolNames, ",") {
		t.Fatalf("names %v", names)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "", "--json", "version")
	if code != 0 || !strings.Contains(out, `"abi":1`) {
		t.Fatalf("exit %d, %q", code, out)
	}
}

func TestRunTool(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runCLI(t, "", "--json", "-workspace", dir, "write_file", `{"path":"a.txt","content":"hi\n"}`)
	if code != 0 || !decode(t, out).OK {
		t.Fatalf("write: exit %d, %q, %q", code, out, stderr)
	}
	code, out, _ = runCLI(t, `{"path":"a.txt"}`, "--json", "-workspace", dir, "read_file", "-")
	if env := decode(t, out); code != 0 || !env.OK || env.Text != "hi\n" {
		t.Fatalf("read: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "read_file", `{"path":"a.txt","line_numbers":true}`)
	if env := decode(t, out); code != 0 || !env.OK || env.Text != "1| hi\n[line 1 of 1; end of file]" {
		t.Fatalf("read range: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "get_path_info", `{"path":"a.txt"}`)
	if env := decode(t, out); code != 0 || !env.OK || !strings.HasPrefix(env.Text, "a.txt: file, 3 bytes, 1 line\n") {
		t.Fatalf("get_path_info: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "list_dir")
	if env := decode(t, out); code != 0 || !env.OK || !strings.Contains(env.Text, "a.txt") {
		t.Fatalf("list: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "search_text", `{"query":"hi"}`)
	if env := decode(t, out); code != 0 || !env.OK || !strings.HasPrefix(env.Text, "a.txt:1:1: hi") {
		t.Fatalf("search: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "find_files", `{"pattern":"*.txt"}`)
	if env := decode(t, out); code != 0 || !env.OK || !strings.HasPrefix(env.Text, "a.txt\n") {
		t.Fatalf("find: exit %d, %q", code, out)
	}
	// A tool error: exit 1 with the error envelope.
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "read_file", `{"path":"../x"}`)
	if env := decode(t, out); code != 1 || env.OK || env.Error.Code != "outside_workspace" {
		t.Fatalf("escape: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "read_file", `{"path":`)
	if env := decode(t, out); code != 1 || env.Error.Code != "invalid_arguments" {
		t.Fatalf("bad JSON: exit %d, %q", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "hi\n" {
		t.Fatalf("a.txt = %q", b)
	}
	// A one-file patch needs no state directory.
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "apply_patch", `{"patch":"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hi\n+ho\n"}`)
	if env := decode(t, out); code != 0 || !env.OK || !strings.HasPrefix(env.Text, "applied the patch") {
		t.Fatalf("apply_patch: exit %d, %q", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "ho\n" {
		t.Fatalf("a.txt = %q", b)
	}
}

func TestPolicyFlags(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runCLI(t, "", "--json", "-workspace", dir, "create_directory", `{"path":"a/b"}`)
	if env := decode(t, out); code != 0 || !env.OK || !strings.Contains(string(env.Data), `"parents_created":1`) {
		t.Fatalf("create_directory: exit %d, %q, %q", code, out, stderr)
	}
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "-read-only", "write_file", `{"path":"a/x","content":"x"}`)
	if env := decode(t, out); code != 1 || env.OK || env.Error.Code != "writes_disabled" {
		t.Fatalf("read-only write: exit %d, %q", code, out)
	}
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "-audit-log", log, "list_dir", `{"path":"a"}`)
	if code != 0 || !decode(t, out).OK {
		t.Fatalf("audited list: exit %d, %q", code, out)
	}
	var line struct {
		Tool    string   `json:"tool"`
		Paths   []string `json:"paths"`
		Outcome string   `json:"outcome"`
	}
	b, err := os.ReadFile(log)
	if err != nil || json.Unmarshal(b, &line) != nil || line.Tool != "list_dir" || line.Outcome != "ok" || len(line.Paths) != 1 || line.Paths[0] != "a" {
		t.Fatalf("audit log %q (%v): %+v", b, err, line)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{},
		{"read_file", `{"path":"a"}`}, // no -workspace
		{"--json", "-workspace", dir, "remove_file", `{}`},        // unknown tool
		{"--json", "-workspace", dir, "read_file", `{}`, "extra"}, // too many arguments
		{"-nope"},                      // unknown flag
		{"tools", "extra"},             // tools takes no arguments
		{"-workspace", "", "list_dir"}, // empty workspace
		{"-workspace", filepath.Join(dir, "f"), "list_dir"}, // set up below as a file
	} {
		os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
		code, out, stderr := runCLI(t, "", args...)
		if code != 2 || out != "" || stderr == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
	if code, _, _ := runCLI(t, "", "-h"); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
}

func TestDemoCommand(t *testing.T) {
	t.Setenv("WSFS_MODEL_URL", "")
	code, out, stderr := runCLI(t, "", "demo")
	if code != 0 || !strings.Contains(out, "== outside/secret.txt untouched: true") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	t.Setenv("WSFS_MODEL_URL", "http://127.0.0.1:1/v1")
	t.Setenv("WSFS_MODEL", "")
	if code, _, stderr := runCLI(t, "", "demo"); code != 2 || !strings.Contains(stderr, "WSFS_MODEL") {
		t.Fatalf("exit %d, %q", code, stderr)
	}
}

// TestMCPFlags runs `wsfs mcp` with a stand-in for the stdio server, to
// check what the flags make of the workspace and the options.
func TestMCPFlags(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "wsfs.json")
	if err := os.WriteFile(cfg, []byte(`{"root":"/nonexistent/elsewhere","limits":{"max_read_bytes":7}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var got mcpserver.Options
	var gotRoot string
	var gotLimits wsfs.Limits
	serve := func(_ context.Context, ws *wsfs.Workspace, o mcpserver.Options) error {
		got, gotRoot, gotLimits = o, ws.Root(), ws.Limits()
		return nil
	}
	var errw strings.Builder
	if code := runMCP(context.Background(), []string{"--config", cfg, "--root", root, "--read-only"}, &errw, serve); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	if !got.ReadOnly || gotRoot != root || gotLimits.MaxReadBytes != 7 {
		t.Fatalf("options %+v, root %s, limits %+v", got, gotRoot, gotLimits)
	}
	if !strings.Contains(errw.String(), "wsfs mcp: serving on stdio") {
		t.Fatalf("no startup line on stderr: %q", errw.String())
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--root"},
		{[]string{"--root", root, "extra"}, "no arguments"},
		{[]string{"--config", filepath.Join(root, "missing.json")}, "reading --config"},
		{[]string{"--root", root, "--bogus"}, "flag provided but not defined"},
	} {
		errw.Reset()
		if code := runMCP(context.Background(), tc.args, &errw, serve); code != 2 || !strings.Contains(errw.String(), tc.want) {
			t.Errorf("wsfs mcp %v: exit %d, stderr %q", tc.args, code, errw.String())
		}
	}
	// The server failing is exit 1.
	fail := func(context.Context, *wsfs.Workspace, mcpserver.Options) error { return errors.New("broken pipe") }
	errw.Reset()
	if code := runMCP(context.Background(), []string{"--root", root}, &errw, fail); code != 1 || !strings.Contains(errw.String(), "broken pipe") {
		t.Fatalf("failing server: exit %d, %q", code, errw.String())
	}
}

// TestRunToolUnderAProfile: -profile NAME runs the profile's tools with its
// envelope; a failure in the profile's envelope exits 1 (issue 31, item 1).
func TestRunToolUnderAProfile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.py"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "", "--json", "-workspace", dir, "-profile", "capability-plan", "file_read", `{"path":"a.py"}`)
	if code != 0 || !strings.Contains(out, `"ok":true`) || !strings.Contains(out, `"content":"x = 1\n"`) {
		t.Fatalf("file_read: exit %d, %q, %q", code, out, stderr)
	}
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "-profile", "capability-plan", "file_delete", `{"path":"nope"}`)
	if code != 1 || !strings.Contains(out, `"error_code":"PATH_NOT_FOUND"`) {
		t.Fatalf("file_delete: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "", "--json", "-workspace", dir, "-profile", "agent-base", "write_file", `{"path":"b.txt","content":"x"}`)
	if code != 1 || !strings.Contains(out, `"error":"writes_disabled"`) {
		t.Fatalf("agent-base write: exit %d, %q", code, out)
	}
	// A name only the profile has is not a usage error under it, and is without it.
	if code, _, _ := runCLI(t, "", "--json", "-workspace", dir, "file_read", `{"path":"a.py"}`); code != 2 {
		t.Fatalf("file_read without a profile: exit %d", code)
	}
}
